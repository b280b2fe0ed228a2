// the CPU build of a lab kernel: CUDA's names come from cuda_on_cpu.h
#pragma once
#include "cuda_on_cpu.h"
