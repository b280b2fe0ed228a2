// The CPU runtime of a lab kernel's CUDA source (cuda_cpu.py builds it once, as a trusted object
// of its own, and links it with the student's object; the student's object alone is checked
// against the grader's allowlist).
//
// Threads: every CUDA thread of a block is a fiber with a stack of its own; the blocks of a
// launch run one after the other. A fiber runs until it reaches __syncthreads or a warp collective
// (shuffle, ballot, __syncwarp), where it switches back to the scheduler (a hand-written switch of
// the callee-saved registers: no system call, unlike swapcontext). The barrier releases when every
// thread of the block waits at the same __syncthreads; a collective completes when every lane of
// its mask has arrived, with the values each lane brought (lockstep semantics). When nothing can
// run and threads still wait, the kernel deadlocked on a GPU: the report says who waits where,
// and which thread exited or waits elsewhere.
//
// Memory: the student's object is compiled with -fsanitize=thread, so GCC calls __tsan_readN /
// __tsan_writeN before each of its loads and stores; those are defined here (TSan itself is
// never linked). Each address is classified: a fiber's stack (locals: free), one of the buffers
// the lab passed (inside: free; in the guard regions around it: an out-of-bounds access, recorded
// with its index, and harmless because the guards are the lab's memory), static memory of the
// library (__shared__ variables are function-local statics: the race check), anything else (a
// wild access: the kernel is stopped before it happens). The race check records, per byte of
// shared memory and per barrier epoch, who wrote and who read it; two threads touching the same
// byte in one epoch, one of them writing, is a race unless both are lanes of one warp with a warp
// collective between the accesses. The initcheck records, per byte of __shared__ memory (the
// dynamic shared memory, and the variables cuda_cpu.py names: cuda_cpu_shared), the epoch of its
// last write: a read of bytes that no thread of the block wrote since the block began returns
// garbage on a GPU (here the statics hold zeros, or what the block before left), and is reported.
//
// Speed (lab/estimate.py's counters, only while cuda_cpu_profile(1) is on): every load and store of a
// lab buffer is counted by its static site (the instrumentation call's return address); a warp's
// "instruction" is the k-th execution of a site by each lane of the warp (lanes do not run in
// lockstep here: a fiber runs alone until its next barrier or collective), and for each the distinct
// 32-byte sectors it touches beside the bytes it asks for (coalescing). Also: global atomics by
// address, the threads of each block that touched global memory, and each thread's access count
// (the longest is the kernel's span). cuda_cpu_profile(2) records launches without running them
// (the grid a launcher gives a benchmark's shape, with no memory behind the pointers).
#include "cuda_on_cpu.h"

#undef __CUDACC__  // nvcc's, for the kernel's view only (the C++ headers below test it)
#undef __NVCC__
#undef printf
#undef memcpy  // the runtime's own copies are not the kernel's
#undef memmove
#undef memset
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdarg>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace __cuda_cpu {
Builtins builtins;
}

using namespace __cuda_cpu;

namespace {

enum State { RUNNABLE, AT_BARRIER, AT_COLLECTIVE, EXITED };

struct Fiber {
  void* sp;
  int state, line;
  uint3 tid;
  int kind, size, arg, width;
  unsigned mask;
  unsigned char value[16];
  int predicate[2];
  uintptr_t cas_lost;  // an address whose atomicCAS failed here as under contention, not succeeded yet
  int cas_line, cas_fails_left;  // cas_fails_left: how many more of its CASes there fail as contended
};

struct Buffer {
  uintptr_t lo, len, guard_lo, guard_len;
  long long elem;
};

struct Cell {  // one byte of shared memory, this barrier epoch
  uintptr_t addr;
  unsigned stamp;
  int writer, reader[2];
  unsigned writer_sync, reader_sync[2];
  void *writer_pc, *reader_pc[2];
  bool writer_atomic;  // the last write was an atomic: other threads' atomics do not race with it
  int other_atomic;    // an earlier atomic writer than `writer` (another thread): a plain access races it too
  unsigned other_atomic_sync;
  void* other_atomic_pc;
};

struct Init {  // one byte of __shared__ memory, for the initcheck
  unsigned written;     // the epoch (stamp) of its last write: this block's iff >= Runtime::block_stamp
  unsigned read_stamp;  // the epoch of the pending read below
  int pending;          // index in Runtime::pending of a read of it this epoch that found it unwritten
};

// A read of unwritten shared bytes. It stays pending until its epoch ends: a write of the bytes later
// in the epoch by a thread not ordered with the reader makes it a race (the race check reports that),
// and cancels it; what is left at the end of the epoch is reported.
struct Uninit {
  uintptr_t addr;
  int size, thread;
  unsigned sync;
  void* pc;
  bool dynamic, cancelled;
};

struct SharedRange {  // a __shared__ variable: offset in the library, bytes, address, first Init
  uintptr_t off, len, lo;
  size_t base;
};

constexpr size_t STACK = 256 << 10;
constexpr unsigned CELLS = 1u << 17;
constexpr size_t MAX_PENDING = 1 << 16;

// ---- the speed estimate's counters ----
constexpr int MAX_SITES = 64;              // static load/store sites of a kernel (more are not counted)
constexpr unsigned K_PER_SITE = 16;        // executions of a site per lane grouped into warp instructions
constexpr long long SAMPLE_BLOCKS = 64;    // blocks whose warp instructions are grouped (all are counted)
constexpr long long SAMPLE_ACCESSES = 2 << 20;
constexpr unsigned INSTANCE_SLOTS = 1u << 15, SECTOR_SLOTS = 1u << 19, ATOMIC_SLOTS = 1u << 16;

struct Slot {  // an open-addressing table entry, valid in generation `gen`
  unsigned long long key;
  unsigned gen;
  int value;
};

struct Site {  // a load or store of the student's object, on one lab buffer
  uintptr_t pc;
  int buf, size;
  bool write;
  long long accesses, bytes;                      // every execution, every block
  long long instances, lanes, sampled_bytes, sectors;  // the grouped warp instructions
  int max_sectors;
  long long stride[4], stride_count[4];           // lane-to-lane address steps seen, most common first
};

struct Instance {  // one warp instruction: the k-th execution of a site by the lanes of a warp
  int site, lanes, sectors, lane0, lane1;
  long long bytes;
  uintptr_t addr0, addr1;
};

struct Launch {
  dim3 grid, block;
  size_t shared;
};

struct Profile {
  int mode = 0;  // 0 off, 1 count, 2 dry (launches are recorded, not run)
  std::vector<Site> sites;
  Slot site_slots[2 * MAX_SITES];
  std::vector<unsigned> counts;             // thread x MAX_SITES: executions of each site this block
  std::vector<long long> thread_accesses;   // thread: global accesses this block (atomics included)
  std::vector<Instance> instances;
  Slot* instance_slots = nullptr;
  Slot* sector_slots = nullptr;
  unsigned gen = 1;
  size_t sectors_used = 0;
  bool sampling = false;
  std::vector<Launch> launches;
  long long blocks = 0, sampled_blocks = 0, active_blocks = 0, active_threads = 0, threads = 0;
  long long accesses = 0, sampled_accesses = 0, span = 0, max_active_in_block = 0;
  // atomics on lab buffers, by address
  Slot* atomic_slots = nullptr;
  std::vector<long long> atomic_counts;
  long long atomics = 0, atomic_addresses = 0, atomic_untracked = 0, atomic_max = 0;
  int atomic_line = 0, atomic_buf = -1;
  bool atomic_seen = false;
};

struct Runtime {
  std::vector<Fiber> fibers;
  char* stacks = nullptr;
  size_t stacks_len = 0;
  int nthreads = 0, current = -1, at_barrier = 0, exited = 0, barrier_gen = 0;
  void* scheduler_sp = nullptr;
  void (*body)(void*) = nullptr;
  void* context = nullptr;
  bool active = false, aborted = false, in_atomic = false, tracking = true;
  Buffer buffers[8];
  int nbuffers = 0;
  uintptr_t host_lo = 0, host_len = 0, lib_base = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> writable, readonly;
  char* dynamic = nullptr;
  size_t dynamic_len = 0, dynamic_cap = 0;
  unsigned stamp = 0, cells_used = 0;
  std::vector<unsigned> warp_sync;  // per warp: collectives completed (this block)
  std::vector<unsigned> warp_log;   // per warp: the last WARP_LOG collectives' masks, by number mod WARP_LOG
  Cell* cells = nullptr;
  std::string report;
  long long oob_count[8][2] = {};
  // who wrote each element of the output (the last buffer) this launch: (global thread + 1, epoch)
  struct Written {
    unsigned first, second;  // global thread + 1, epoch
    bool atomic;
  };
  std::vector<Written> written;
  long long block_linear = 0, double_writes = 0, input_writes = 0, untracked = 0, cross_reads = 0;
  long long race_count = 0, wild_count = 0;
  // the initcheck
  std::vector<SharedRange> shared_ranges;
  std::vector<Init> static_init, dynamic_init;
  std::vector<Uninit> pending;
  unsigned block_stamp = 0, launch_stamp = 0;  // the epochs that began this block, this launch
  long long uninit_count = 0;
  // who last wrote each 4-byte word of the library's other writable statics (__device__ variables)
  // this launch: block + 1 (the cross-block read check); `ticket`: this block did an atomic on one
  std::unordered_map<uintptr_t, long long> device_writer;
  // the first plain read of each word no block had written yet this launch: block + 1, its report
  // (a block that reads a word before another block writes it relied on the order blocks run in)
  std::unordered_map<uintptr_t, std::pair<long long, std::string>> device_early_reader;
  bool ticket = false, device_untracked = false;
  long long device_cross = 0, blocks = 0, run_position = 0;  // run_position: this block's turn, 0 first
  std::vector<long long> order;  // the blocks' run order (launch())
  std::mt19937_64 rng{std::random_device{}()};  // the order past the first block, CAS contention
  // the global thread (+ 1) that last did an atomicCAS on each address this launch (cas_contended)
  // (shared memory's per block, cleared as each block starts: its own on a GPU; other memory's per launch)
  std::unordered_map<uintptr_t, long long> cas_last, cas_last_shared;
  long long cas_once = 0;
  int last_error = 0;
  long long clock = 0;
  unsigned long long clock_state = 0x9E3779B97F4A7C15ull;  // clock_counter's step generator
  Profile* profile = nullptr;  // the speed estimate's counters (cuda_cpu_profile)
};
Runtime* rt = nullptr;

Runtime& R() {
  if (!rt) rt = new Runtime();
  return *rt;
}

// ---- context switch ----
#if defined(__x86_64__)
extern "C" void __cuda_cpu_switch(void** save, void* to);
asm(R"(
.text
.globl __cuda_cpu_switch
.hidden __cuda_cpu_switch
.type __cuda_cpu_switch,@function
__cuda_cpu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size __cuda_cpu_switch, .-__cuda_cpu_switch
)");

void fiber_main();

void* initial_stack(char* lo, size_t size) {
  uintptr_t top = ((uintptr_t)lo + size) & ~(uintptr_t)15;
  uint64_t* sp = (uint64_t*)top;
  *--sp = 0;                             // where fiber_main would return to: it never returns
  *--sp = (uint64_t)(uintptr_t)&fiber_main;
  for (int i = 0; i < 6; ++i) *--sp = 0;  // rbp rbx r12 r13 r14 r15
  --sp;
  uint32_t csr;
  uint16_t cw;
  asm volatile("stmxcsr %0" : "=m"(csr));
  asm volatile("fnstcw %0" : "=m"(cw));
  ((uint32_t*)sp)[0] = csr;
  ((uint16_t*)sp)[2] = cw;
  return sp;
}
#else
#error "the CPU build of CUDA kernels needs x86-64 (the fiber switch is written for it)"
#endif

void to_scheduler() {
  Runtime& r = R();
  __cuda_cpu_switch(&r.fibers[r.current].sp, r.scheduler_sp);
}

// ---- reports ----
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
std::string where(int t) {
  const Runtime& r = R();
  const uint3 b = builtins.blockIdx, i = r.fibers[t].tid;
  return fmt("block=%u,%u,%u|thread=%u,%u,%u", b.x, b.y, b.z, i.x, i.y, i.z);
}
std::string other(int t) {
  const uint3 i = R().fibers[t].tid;
  return fmt("other_thread=%u,%u,%u", i.x, i.y, i.z);
}
uintptr_t pc_off(void* pc) { return (uintptr_t)pc - R().lib_base; }

// A fault after which the kernel cannot go on (the GPU would hang or compute garbage): stop it.
void record(const std::string& line) {
  Runtime& r = R();
  r.report += line + "\n";
  r.aborted = true;
}
[[noreturn]] void fatal(const std::string& line) {
  record(line);
  to_scheduler();
  abort();  // never resumed
}

int lane_of(int t) { return t % 32; }

// ---- memory ----
// Whether the current thread's access comes after thread u's (made when its warp had seen usync
// collectives): u is the thread itself, or a lane of its warp with a warp collective between them.
// A collective orders only the lanes of its mask (`__syncwarp(1u << lane)` waits for nobody): u and t
// are ordered by one that came after u's access and named both.
constexpr unsigned WARP_LOG = 64;
bool ordered(int u, unsigned usync) {
  const Runtime& r = R();
  const int t = r.current, w = t / 32;
  if (u == t) return true;
  if (u / 32 != w) return false;
  const unsigned now = r.warp_sync[w], both = (1u << lane_of(u)) | (1u << lane_of(t));
  if (now - usync > WARP_LOG) return true;  // past what the log holds: a warp that synchronizes that often
  for (unsigned k = usync; k != now; ++k)
    if ((r.warp_log[w * WARP_LOG + k % WARP_LOG] & both) == both) return true;
  return false;
}

// Atomics take part: one thread's atomic and another's plain access of the same byte in one epoch race
// (a total read, or zeroed, while other warps still add to it); two atomics do not.
void shared_access(uintptr_t a, int size, bool write, void* pc) {
  Runtime& r = R();
  if (!r.tracking) return;
  const bool atomic = r.in_atomic;  // its read and its write, both as an atomic write
  write |= atomic;
  const int t = r.current, w = t / 32;
  const unsigned sync = r.warp_sync[w];
  for (int k = 0; k < size; ++k) {
    const uintptr_t byte = a + k;
    unsigned h = (unsigned)((byte * 0x9E3779B97F4A7C15ull) >> 47) & (CELLS - 1);
    Cell* c = nullptr;
    for (unsigned probe = 0; probe < CELLS; ++probe, h = (h + 1) & (CELLS - 1)) {
      Cell& x = r.cells[h];
      if (x.stamp != r.stamp) {
        if (++r.cells_used > CELLS / 2) {  // too much to track: stop, and say so (a kernel that read a
          // large __device__ table first once turned the race check off for its whole launch)
          r.tracking = false;
          if (r.untracked++ == 0)
            r.report += fmt("kind=untracked|bytes=%u|pc=%lu|", CELLS / 2, pc_off(pc)) + where(r.current) + "\n";
          return;
        }
        x = Cell{byte, r.stamp, -1, {-1, -1}, 0, {0, 0}, nullptr, {nullptr, nullptr}, false, -1, 0, nullptr};
        c = &x;
        break;
      }
      if (x.addr == byte) { c = &x; break; }
    }
    if (!c) return;
    int before = -1;
    void* before_pc = nullptr;
    // atomics race with plain stores only: two atomics do not, nor an atomic and a plain read (a CAS loop's
    // first guess, a float atomic max's early exit `old = *p; while (v > old) ...` read so, rightly)
    bool before_write = false;
    const bool plain_write = write && !atomic;
    if (c->writer >= 0 && !ordered(c->writer, c->writer_sync) && (!c->writer_atomic || plain_write)) {
      before = c->writer, before_pc = c->writer_pc, before_write = true;
    } else if (plain_write && c->other_atomic >= 0 && !ordered(c->other_atomic, c->other_atomic_sync)) {
      before = c->other_atomic, before_pc = c->other_atomic_pc, before_write = true;
    } else if (plain_write) {
      for (int i = 0; i < 2 && before < 0; ++i)
        if (c->reader[i] >= 0 && !ordered(c->reader[i], c->reader_sync[i])) before = c->reader[i], before_pc = c->reader_pc[i];
    }
    if (before >= 0) {
      const bool in_dynamic = r.dynamic && a - (uintptr_t)r.dynamic < r.dynamic_len;
      if (r.race_count++ == 0)
        r.report += fmt("kind=race|rw=%s|pc=%lu|other_rw=%s|other_pc=%lu|addr=%lu|size=%d|%s", write ? "write" : "read",
                        pc_off(pc), before_write ? "write" : "read", pc_off(before_pc), (unsigned long)(in_dynamic ? a - (uintptr_t)r.dynamic : a - r.lib_base),
                        size, in_dynamic ? "dynamic=1|" : "") + where(t) + "|" + other(before) + "\n";
      return;
    }
    if (write) {
      if (atomic && c->writer >= 0 && c->writer != t && c->writer_atomic)
        c->other_atomic = c->writer, c->other_atomic_sync = c->writer_sync, c->other_atomic_pc = c->writer_pc;
      c->writer = t, c->writer_sync = sync, c->writer_pc = pc, c->writer_atomic = atomic;
    } else {
      for (int i = 0; i < 2; ++i) {
        if (c->reader[i] == t) { c->reader_sync[i] = sync; break; }
        if (c->reader[i] < 0) { c->reader[i] = t, c->reader_sync[i] = sync, c->reader_pc[i] = pc; break; }
      }
    }
  }
}

// The initcheck of an access to shared memory (atomics included: an atomicAdd to a counter no thread
// set reads garbage too). A read is flagged when none of its bytes was written by the block, so
// that copying a struct with padding bytes nobody stores is not.
void init_access(uintptr_t a, int size, bool write, void* pc, bool dynamic) {
  Runtime& r = R();
  Init* shadow;
  uintptr_t lo, len;
  if (dynamic) {
    shadow = r.dynamic_init.data(), lo = (uintptr_t)r.dynamic, len = r.dynamic_len;
  } else {
    const SharedRange* s = nullptr;
    for (const auto& x : r.shared_ranges)
      if (a - x.lo < x.len) { s = &x; break; }
    if (!s) return;  // a __device__ variable or another static: initialized as on a GPU
    shadow = r.static_init.data() + s->base, lo = s->lo, len = s->len;
  }
  const uintptr_t first = a - lo, end = first + size < len ? first + size : len;
  if (write) {
    for (uintptr_t k = first; k < end; ++k) {
      Init& c = shadow[k];
      // the first write after a pending read, by a thread not ordered with the reader: a race, which
      // the race check reports (it leaves atomics out, and may have stopped tracking: then not)
      if (c.read_stamp == r.stamp && c.pending >= 0 && c.written < r.block_stamp && !r.in_atomic && r.tracking) {
        Uninit& u = r.pending[c.pending];
        if (!ordered(u.thread, u.sync)) u.cancelled = true;
      }
      c.written = r.stamp;
    }
    return;
  }
  for (uintptr_t k = first; k < end; ++k) {
    const Init& c = shadow[k];
    if (c.written >= r.block_stamp || (c.read_stamp == r.stamp && c.pending >= 0)) return;
  }
  if (first >= end || r.pending.size() >= MAX_PENDING) return;
  const int t = r.current;
  r.pending.push_back(Uninit{a, size, t, r.warp_sync[t / 32], pc, dynamic, false});
  for (uintptr_t k = first; k < end; ++k) shadow[k].read_stamp = r.stamp, shadow[k].pending = (int)r.pending.size() - 1;
}

// The epoch ends (a barrier, or the end of the block): its reads of unwritten bytes are faults.
void flush_uninit() {
  Runtime& r = R();
  for (const Uninit& u : r.pending) {
    if (u.cancelled || r.uninit_count++) continue;
    const uintptr_t off = u.dynamic ? u.addr - (uintptr_t)r.dynamic : u.addr - r.lib_base;
    r.report += fmt("kind=uninit|pc=%lu|addr=%lu|size=%d|%s", pc_off(u.pc), (unsigned long)off, u.size,
                    u.dynamic ? "dynamic=1|" : "") + where(u.thread) + "\n";
  }
  r.pending.clear();
}

void wild(uintptr_t a, int size, bool write, void* pc) {
  Runtime& r = R();
  std::string near;
  long long best = -1;
  for (int b = 0; b < r.nbuffers; ++b) {
    const Buffer& B = r.buffers[b];
    const long long d = a >= B.lo + B.len ? (long long)(a - (B.lo + B.len)) : (long long)(B.lo - a);
    if (best < 0 || d < best) {
      best = d;
      near = fmt("near=%d|index=%lld", b, (long long)((long long)(a - B.lo) >= 0 ? (long long)(a - B.lo) / B.elem
                                                                                  : -(long long)((B.lo - a + B.elem - 1) / B.elem)));
    }
  }
  fatal(fmt("kind=wild|rw=%s|size=%d|pc=%lu|", write ? "write" : "read", size, pc_off(pc)) + near + "|" + where(r.current));
}

// Two threads writing one element of the output: on a GPU either may land last (a race on global
// memory; a grid-stride loop with the wrong step makes them). Ordered writes (same thread, or the
// same block across a __syncthreads) are fine. An atomic counts as a write against a plain store
// (`y[b] = 0` by one warp and atomicAdd(&y[b], ...) by another with no __syncthreads between, or by
// another block: on a GPU the atomics may land before the store, which wipes them); atomics among
// themselves are fine.
void output_store(uintptr_t a, void* pc, bool atomic) {
  Runtime& r = R();
  const Buffer& B = r.buffers[r.nbuffers - 1];
  const size_t index = (a - B.lo) / B.elem;
  if (index >= r.written.size()) return;
  const unsigned me = (unsigned)(r.block_linear * r.nthreads + r.current + 1);
  auto& w = r.written[index];
  if (w.second < r.launch_stamp) w.first = 0;  // an earlier launch's: ordered before this one
  const long long other_block = w.first ? (long long)((w.first - 1) / r.nthreads) : -1;
  const bool unordered = w.first && w.first != me && (other_block != r.block_linear || w.second == r.stamp);
  if (unordered && !(atomic && w.atomic) && r.double_writes++ == 0) {
    const dim3 g = builtins.gridDim;
    const uint3 t = r.fibers[(w.first - 1) % r.nthreads].tid;
    r.report += fmt("kind=double_write|%sbuf=%d|index=%zu|pc=%lu|other_block=%lld,%lld,%lld|other_thread=%u,%u,%u|",
                    atomic && !w.atomic ? "atomic=1|" : "", r.nbuffers - 1, index, pc_off(pc), other_block % g.x,
                    other_block / g.x % g.y, other_block / ((long long)g.x * g.y), t.x, t.y, t.z) + where(r.current) + "\n";
  }
  w.first = me, w.second = r.stamp, w.atomic = atomic;
}

// A read of an output element another block wrote: blocks run in any order on a GPU (and at once),
// so that block may not have written it yet; here blocks run one after another and it always has.
void output_read(uintptr_t a, void* pc) {
  Runtime& r = R();
  const Buffer& B = r.buffers[r.nbuffers - 1];
  const size_t index = (a - B.lo) / B.elem;
  if (index >= r.written.size()) return;
  const auto& w = r.written[index];
  if (!w.first || w.second < r.launch_stamp || (long long)((w.first - 1) / r.nthreads) == r.block_linear) return;
  if (r.ticket && r.run_position == r.blocks - 1) return;  // the last block to arrive (device_access)
  if (r.cross_reads++ == 0) {
    const long long other = (w.first - 1) / r.nthreads;
    const dim3 g = builtins.gridDim;
    r.report += fmt("kind=cross_read|buf=%d|index=%zu|pc=%lu|other_block=%lld,%lld,%lld|", r.nbuffers - 1, index,
                    pc_off(pc), other % g.x, other / g.x % g.y, other / ((long long)g.x * g.y)) + where(r.current) + "\n";
  }
}

// A read of a __device__ variable's byte another block wrote this launch: as for the output, that block
// may not have run yet on a GPU. The ordered way (CUDA's last-block reduction) is an atomic ticket: the
// block that finds every other block arrived reads their partials; that is the block that runs last here
// (run_position), after an atomic of its own. Any other block's plain read of another block's plain store
// is reported, and so is a plain read of a byte another block stores later in the launch (the blocks after
// the first that wrote __device__ memory run in a random order, launch()). A byte last written by an
// atomic may be read plainly (a float atomic max's first guess, corrected by its CAS loop), and the
// last block may store what others read (a counter or epoch reset for the next launch).
constexpr size_t MAX_DEVICE_BYTES = 1 << 22;
constexpr size_t MAX_EARLY_READS = 1 << 14;  // each keeps its report's text: a lab kernel reads a few such bytes
void device_access(uintptr_t a, int size, bool write, void* pc) {
  Runtime& r = R();
  if (r.device_untracked) return;
  const long long me = r.block_linear + 1;
  if (r.in_atomic) r.ticket = true;
  const bool last = r.ticket && r.run_position == r.blocks - 1;
  for (uintptr_t w = a; w < a + size; ++w) {
    if (write || r.in_atomic) {
      if (r.device_writer.size() >= MAX_DEVICE_BYTES && !r.device_writer.count(w)) {
        r.device_untracked = true;  // a large __device__ scratch (a chapter's score matrix): not followed
        return;
      }
      r.device_writer[w] = r.in_atomic ? -me : me;  // negative: last written by an atomic
      const auto early = r.device_early_reader.find(w);
      if (early != r.device_early_reader.end()) {  // the first write after a read of a byte nobody had written
        // (an atomic update of a byte another block read is fine: an atomic max's early exit reads so)
        if (!r.in_atomic && !last && early->second.first != me && r.device_cross++ == 0)
          r.report += early->second.second + fmt("|later_block=%u,%u,%u\n", builtins.blockIdx.x, builtins.blockIdx.y,
                                                 builtins.blockIdx.z);
        r.device_early_reader.erase(early);
      }
      continue;
    }
    const auto it = r.device_writer.find(w);
    if (it == r.device_writer.end()) {
      if (r.device_early_reader.size() < MAX_EARLY_READS && !r.device_early_reader.count(w))
        r.device_early_reader[w] = {me, fmt("kind=cross_read|device=1|early=1|addr=%lu|size=%d|pc=%lu|",
                                            (unsigned long)(a - r.lib_base), size, pc_off(pc)) + where(r.current)};
      continue;
    }
    if (it->second == me || it->second < 0 || last) continue;
    if (r.device_cross++ == 0) {
      const long long other = it->second - 1;
      const dim3 g = builtins.gridDim;
      r.report += fmt("kind=cross_read|device=1|%saddr=%lu|size=%d|pc=%lu|other_block=%lld,%lld,%lld|", r.ticket ? "ticket=1|" : "",
                      (unsigned long)(a - r.lib_base), size, pc_off(pc), other % g.x, other / g.x % g.y,
                      other / ((long long)g.x * g.y)) + where(r.current) + "\n";
    }
    return;
  }
}

// A store (or atomic) into an input: the launcher hands inputs as const T*, and a kernel that casts
// that away to use an input as scratch races with itself on a GPU (its threads' plain += lose
// updates), where the fibers here run one at a time and would get it right. Reported once.
void input_write(int b, uintptr_t a, void* pc) {
  Runtime& r = R();
  if (r.input_writes++ == 0)
    r.report += fmt("kind=input_write|buf=%d|index=%lld|pc=%lu|", b, (long long)((a - r.buffers[b].lo) / r.buffers[b].elem),
                    pc_off(pc)) + where(r.current) + "\n";
}

// ---- the speed estimate's counting (Profile; off unless cuda_cpu_profile(1)) ----
inline unsigned slot_hash(unsigned long long key, unsigned cap) {
  return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 29) & (cap - 1);
}

// The slot of `key` in `table` (cap slots, this generation's entries valid): found, or new (value -1,
// `fresh`) unless `insert` is false or the table is full (nullptr).
Slot* find_slot(Slot* table, unsigned cap, unsigned gen, unsigned long long key, bool& fresh, bool insert = true) {
  unsigned h = slot_hash(key, cap);
  fresh = false;
  for (unsigned probe = 0; probe < cap; ++probe, h = (h + 1) & (cap - 1)) {
    Slot& x = table[h];
    if (x.gen != gen) {
      if (!insert) return nullptr;
      x = Slot{key, gen, -1};
      fresh = true;
      return &x;
    }
    if (x.key == key) return &x;
  }
  return nullptr;
}

int site_of(Profile& p, void* pc, int b, int size, bool write) {
  const unsigned long long key = (uintptr_t)pc | ((unsigned long long)b << 56) | ((unsigned long long)write << 55);
  bool fresh;
  Slot* slot = find_slot(p.site_slots, 2 * MAX_SITES, 1, key, fresh);
  if (!slot) return -1;
  if (fresh) {
    if ((int)p.sites.size() >= MAX_SITES) return slot->value = -2;  // a site too many: not counted
    Site site{};
    site.pc = (uintptr_t)pc, site.buf = b, site.write = write;
    slot->value = (int)p.sites.size();
    p.sites.push_back(site);
  }
  if (slot->value < 0) return -1;
  Site& site = p.sites[slot->value];
  if (size > site.size) site.size = size;
  return slot->value;
}

// The warp instructions grouped so far go into their sites' totals (at a barrier, the end of a
// block, or when the tables fill: an instruction whose lanes straddle that is counted in parts).
void profile_flush(Profile& p) {
  for (const Instance& in : p.instances) {
    Site& s = p.sites[in.site];
    ++s.instances, s.lanes += in.lanes, s.sampled_bytes += in.bytes, s.sectors += in.sectors;
    if (in.sectors > s.max_sectors) s.max_sectors = in.sectors;
    if (in.lane1 >= 0) {
      const long long step = (long long)(in.addr1 - in.addr0) / (in.lane1 - in.lane0);
      int i = 0;
      while (i < 4 && s.stride_count[i] && s.stride[i] != step) ++i;
      if (i < 4) s.stride[i] = step, ++s.stride_count[i];
    }
  }
  p.instances.clear();
  p.sectors_used = 0;
  if (++p.gen == 0) {  // wrapped: every slot is stale again
    memset(p.instance_slots, 0, INSTANCE_SLOTS * sizeof(Slot));
    memset(p.sector_slots, 0, SECTOR_SLOTS * sizeof(Slot));
    p.gen = 1;
  }
}

// A load or store of a lab buffer (inside it), not part of an atomic.
void profile_access(Runtime& r, int b, uintptr_t a, int size, bool write, void* pc) {
  Profile& p = *r.profile;
  const int t = r.current;
  ++p.thread_accesses[t];
  ++p.accesses;
  const int s = site_of(p, pc, b, size, write);
  if (s < 0) return;
  ++p.sites[s].accesses, p.sites[s].bytes += size;
  if (!p.sampling) return;
  unsigned& k = p.counts[(size_t)t * MAX_SITES + s];
  if (k >= K_PER_SITE) return;
  if (p.sampled_accesses >= SAMPLE_ACCESSES) {
    p.sampling = false;
    return;
  }
  ++p.sampled_accesses;
  const unsigned long long key = ((unsigned long long)(t / 32) << 40) | ((unsigned long long)s << 32) | k++;
  bool fresh;
  Slot* slot = find_slot(p.instance_slots, INSTANCE_SLOTS, p.gen, key, fresh);
  if (!slot) return;
  if (fresh) {
    slot->value = (int)p.instances.size();
    p.instances.push_back(Instance{s, 0, 0, -1, -1, 0, 0, 0});
  }
  const int index = slot->value;
  Instance& in = p.instances[index];
  const int lane = t % 32;
  ++in.lanes, in.bytes += size;
  if (in.lane0 < 0) {
    in.lane0 = lane, in.addr0 = a;
  } else if (in.lane1 < 0 && lane != in.lane0) {
    in.lane1 = lane, in.addr1 = a;
  }
  for (uintptr_t sector = a >> 5; sector <= (a + size - 1) >> 5; ++sector) {
    Slot* x = find_slot(p.sector_slots, SECTOR_SLOTS, p.gen, ((unsigned long long)sector << 20) | (unsigned)index, fresh);
    if (x && fresh) {
      x->value = 0;
      ++in.sectors, ++p.sectors_used;
    }
  }
  if (p.instances.size() >= INSTANCE_SLOTS / 2 || p.sectors_used >= SECTOR_SLOTS / 2) profile_flush(p);
}

// An atomic on a lab buffer (its first access: the read of its read-modify-write).
void profile_atomic(Runtime& r, int b, uintptr_t a) {
  Profile& p = *r.profile;
  ++p.thread_accesses[r.current];
  ++p.accesses, ++p.atomics;
  p.atomic_buf = b;
  bool fresh;
  Slot* x = find_slot(p.atomic_slots, ATOMIC_SLOTS, 1, a, fresh, p.atomic_addresses < ATOMIC_SLOTS / 2);
  if (!x) {
    ++p.atomic_untracked;
    return;
  }
  if (fresh) {
    x->value = (int)p.atomic_counts.size();
    p.atomic_counts.push_back(0);
    ++p.atomic_addresses;
  }
  const long long n = ++p.atomic_counts[x->value];
  if (n > p.atomic_max) p.atomic_max = n;
}

void profile_block_begin(Runtime& r) {
  Profile* p = r.profile;
  if (!p || p->mode != 1) return;
  p->thread_accesses.assign(r.nthreads, 0);
  p->sampling = p->sampled_blocks < SAMPLE_BLOCKS && p->sampled_accesses < SAMPLE_ACCESSES;
  if (p->sampling) {
    ++p->sampled_blocks;
    p->counts.assign((size_t)r.nthreads * MAX_SITES, 0);
  }
}

void profile_block_end(Runtime& r) {
  Profile* p = r.profile;
  if (!p || p->mode != 1) return;
  profile_flush(*p);
  p->sampling = false;
  ++p->blocks, p->threads += r.nthreads;
  long long active = 0;
  for (long long n : p->thread_accesses) {
    active += n > 0;
    if (n > p->span) p->span = n;
  }
  p->active_blocks += active > 0, p->active_threads += active;
  if (active > p->max_active_in_block) p->max_active_in_block = active;
}

inline void access(void* p, int size, bool write, void* pc) {
  Runtime* rp = rt;
  if (!rp || !rp->active || rp->current < 0) return;
  Runtime& r = *rp;
  const uintptr_t a = (uintptr_t)p;
  if (a - (uintptr_t)r.stacks < r.stacks_len) return;  // a fiber's locals
  for (int b = 0; b < r.nbuffers; ++b) {
    const Buffer& B = r.buffers[b];
    if (a - B.guard_lo < B.guard_len) {
      if (a - B.lo < B.len && a + size - B.lo <= B.len) {
        if (write && b == r.nbuffers - 1) output_store(a, pc, r.in_atomic);
        if (!write && b == r.nbuffers - 1 && !r.in_atomic) output_read(a, pc);
        if (write && b < r.nbuffers - 1) input_write(b, a, pc);
        if (r.profile && r.profile->mode == 1) {
          if (!r.in_atomic) {
            profile_access(r, b, a, size, write, pc);
          } else if (!r.profile->atomic_seen) {
            r.profile->atomic_seen = true;
            profile_atomic(r, b, a);
          }
        }
        return;
      }
      if (r.oob_count[b][write]++ == 0) {
        // an access that starts inside and runs past the end (a range of memcpy): its first element past it
        const long long off = a - B.lo < B.len ? (long long)B.len : (long long)(a - B.lo);
        const long long index = off >= 0 ? off / B.elem : -((-off + B.elem - 1) / B.elem);
        r.report += fmt("kind=oob|rw=%s|buf=%d|index=%lld|pc=%lu|", write ? "write" : "read", b, index, pc_off(pc)) +
                    where(r.current) + "\n";
      }
      return;  // the guards are the lab's memory: the access is harmless, and the output says more
    }
  }
  if (a - (uintptr_t)&builtins < sizeof builtins) return;
  if (a - r.host_lo < r.host_len) return;  // the launcher's arguments, on the calling thread's stack
  if (write && !r.in_atomic) {  // a plain store ends CAS contention on its address (cas_contended)
    if (!r.cas_last.empty()) r.cas_last.erase(a);
    if (!r.cas_last_shared.empty()) r.cas_last_shared.erase(a);
  }
  if (r.dynamic && a - (uintptr_t)r.dynamic < r.dynamic_len) {
    init_access(a, size, write, pc, true);
    return shared_access(a, size, write, pc);
  }
  for (auto& s : r.writable)
    if (a - s.first < s.second) {
      bool is_shared = false;
      for (const auto& x : r.shared_ranges) is_shared |= a - x.lo < x.len;
      if (is_shared) init_access(a, size, write, pc, false);
      else device_access(a, size, write, pc);
      return shared_access(a, size, write, pc);
    }
  if (!write)
    for (auto& s : r.readonly)
      if (a - s.first < s.second) return;
  wild(a, size, write, pc);
}

// ---- scheduling ----
void finish_thread();

void fiber_main() {
  Runtime& r = R();
  r.body(r.context);
  finish_thread();
}

void release_barrier() {
  Runtime& r = R();
  for (auto& f : r.fibers)
    if (f.state == AT_BARRIER) f.state = RUNNABLE;
  r.at_barrier = 0;
  ++r.barrier_gen;
  flush_uninit();
  ++r.stamp, r.cells_used = 0, r.tracking = true;  // a new epoch: what came before the barrier is ordered
  if (r.profile && !r.profile->instances.empty()) profile_flush(*r.profile);
}

const char* kind_name(int kind) {
  switch (kind) {
    case SHFL: return "__shfl_sync";
    case SHFL_UP: return "__shfl_up_sync";
    case SHFL_DOWN: return "__shfl_down_sync";
    case SHFL_XOR: return "__shfl_xor_sync";
    case BALLOT: return "__ballot_sync";
    case ANY: return "__any_sync";
    case ALL: return "__all_sync";
    case SYNCWARP: return "__syncwarp";
    default: return "a warp collective";
  }
}

std::string waits_where(const Fiber& f) {
  if (f.state == EXITED) return "exited=1";
  if (f.state == AT_BARRIER) return fmt("at_barrier=%d", f.line);
  if (f.state == AT_COLLECTIVE) return fmt("at_collective=%s|at_line=%d", kind_name(f.kind), f.line);
  return "running=1";
}

// Nothing can run, and threads still wait: on a GPU this kernel hangs (or worse). Say why.
void stuck() {
  Runtime& r = R();
  int waiter = -1, gone = -1, elsewhere = -1, shuffling = -1;
  for (int t = 0; t < r.nthreads; ++t) {
    const Fiber& f = r.fibers[t];
    if (f.state == AT_BARRIER && waiter < 0) waiter = t;
    if (f.state == EXITED && gone < 0) gone = t;
    if (f.state == AT_COLLECTIVE && shuffling < 0) shuffling = t;
  }
  if (waiter >= 0) {  // a barrier some threads did not reach: the first of them names the fault
    for (int t = 0; t < r.nthreads; ++t)
      if (r.fibers[t].state == AT_BARRIER && r.fibers[t].line != r.fibers[waiter].line && elsewhere < 0) elsewhere = t;
    r.current = waiter;
    if (elsewhere >= 0)
      return record(fmt("kind=barrier_divergence|line=%d|other_line=%d|", r.fibers[waiter].line, r.fibers[elsewhere].line) +
                    where(waiter) + "|" + other(elsewhere));
    const int o = gone >= 0 ? gone : shuffling >= 0 ? shuffling : waiter;
    return record(fmt("kind=barrier_exit|line=%d|", r.fibers[waiter].line) + where(waiter) + "|" + other(o) + "|" +
                  waits_where(r.fibers[o]));
  }
  for (int t = 0; t < r.nthreads; ++t) {
    const Fiber& f = r.fibers[t];
    if (f.state != AT_COLLECTIVE) continue;
    const int base = t - lane_of(t);
    for (int l = 0; l < 32; ++l) {
      if (!((f.mask >> l) & 1u) || base + l >= r.nthreads) continue;
      const Fiber& g = r.fibers[base + l];
      if (g.state == AT_COLLECTIVE) continue;
      r.current = t;
      return record(fmt("kind=shfl_waits|op=%s|line=%d|mask=%u|lane=%d|", kind_name(f.kind), f.line, f.mask, l) +
                    where(t) + "|" + other(base + l) + "|" + waits_where(g));
    }
  }
  // lanes of one warp wait at collectives with different masks that never complete
  if (shuffling >= 0) {
    r.current = shuffling;
    const Fiber& f = r.fibers[shuffling];
    record(fmt("kind=shfl_waits|op=%s|line=%d|mask=%u|lane=%d|", kind_name(f.kind), f.line, f.mask, lane_of(shuffling)) +
           where(shuffling) + "|" + other(shuffling) + "|" + waits_where(f));
  }
}

// A thread's end with an atomicCAS that failed as under contention and was never retried (cas_contended).
void cas_check_retried(int t) {
  Runtime& r = R();
  Fiber& f = r.fibers[t];
  if (!f.cas_lost) return;
  if (r.cas_once++ == 0) r.report += fmt("kind=cas_once|line=%d|", f.cas_line) + where(t) + "\n";
  f.cas_lost = 0;
}

void finish_thread() {
  Runtime& r = R();
  const int t = r.current, base = t - lane_of(t);
  cas_check_retried(t);
  r.fibers[t].state = EXITED;
  ++r.exited;
  for (int l = 0; l < 32 && base + l < r.nthreads; ++l) {
    const Fiber& g = r.fibers[base + l];
    if (g.state == AT_COLLECTIVE && ((g.mask >> lane_of(t)) & 1u)) {
      r.current = base + l;
      r.aborted = true;
      r.report += fmt("kind=shfl_exited|op=%s|line=%d|mask=%u|lane=%d|", kind_name(g.kind), g.line, g.mask, lane_of(t)) +
                  where(base + l) + "|" + other(t) + "\n";
      break;
    }
  }
  r.current = t;
  to_scheduler();
  abort();
}

void yield_to_scheduler() { to_scheduler(); }

void run_block() {
  Runtime& r = R();
  while (r.exited < r.nthreads) {
    bool ran = false;
    for (int t = 0; t < r.nthreads; ++t) {
      if (r.fibers[t].state != RUNNABLE) continue;
      r.current = t;
      builtins.threadIdx = r.fibers[t].tid;
      __cuda_cpu_switch(&r.scheduler_sp, r.fibers[t].sp);
      ran = true;
      if (r.aborted) return;
    }
    if (!ran) return stuck();
  }
}

}  // namespace

// ---- the API the header calls ----
namespace __cuda_cpu {

void syncthreads(int line) {
  Runtime& r = R();
  if (!r.active) return;
  Fiber& f = r.fibers[r.current];
  f.state = AT_BARRIER;
  f.line = line;
  if (++r.at_barrier == r.nthreads) {
    bool same = true;
    for (auto& g : r.fibers) same = same && g.line == line;
    if (same) {
      release_barrier();
      return;
    }
  }
  yield_to_scheduler();
}

int syncthreads_reduce(int kind, int predicate, int line) {
  Runtime& r = R();
  if (!r.active) return predicate;
  const int gen = r.barrier_gen & 1;
  r.fibers[r.current].predicate[gen] = predicate != 0;
  syncthreads(line);
  int count = 0;
  for (auto& f : r.fibers) count += f.predicate[gen];
  return kind == 0 ? count : kind == 1 ? count == r.nthreads : count > 0;
}

void collective(int kind, unsigned mask, void* value, int size, int arg, int width, int line) {
  Runtime& r = R();
  if (!r.active) return;
  const int t = r.current, lane = lane_of(t), base = t - lane;
  const int lanes = r.nthreads - base < 32 ? r.nthreads - base : 32;
  Fiber& f = r.fibers[t];
  if (!((mask >> lane) & 1u))
    fatal(fmt("kind=shfl_self|op=%s|line=%d|mask=%u|lane=%d|", kind_name(kind), line, mask, lane) + where(t));
  if (lanes < 32 && (mask >> lanes))
    fatal(fmt("kind=shfl_beyond|op=%s|line=%d|mask=%u|lanes=%d|", kind_name(kind), line, mask, lanes) + where(t));
  if (kind <= SHFL_XOR && (width < 1 || width > 32 || (width & (width - 1))))
    fatal(fmt("kind=shfl_width|op=%s|line=%d|width=%d|", kind_name(kind), line, width) + where(t));
  for (int l = 0; l < lanes; ++l)
    if (((mask >> l) & 1u) && r.fibers[base + l].state == EXITED)
      fatal(fmt("kind=shfl_exited|op=%s|line=%d|mask=%u|lane=%d|", kind_name(kind), line, mask, l) + where(t) + "|" +
            other(base + l));
  f.kind = kind, f.mask = mask, f.arg = arg, f.width = width, f.line = line, f.size = size;
  std::memcpy(f.value, value, size);
  f.state = AT_COLLECTIVE;
  for (int l = 0; l < lanes; ++l)
    if (((mask >> l) & 1u) && r.fibers[base + l].state != AT_COLLECTIVE) {
      yield_to_scheduler();
      std::memcpy(value, f.value, size);
      return;
    }
  // everyone named is here: check they meet at the same collective, then exchange
  for (int l = 0; l < lanes; ++l) {
    if (!((mask >> l) & 1u)) continue;
    const Fiber& g = r.fibers[base + l];
    if (g.kind != kind || g.mask != mask || g.line != line)
      fatal(fmt("kind=shfl_mismatch|op=%s|line=%d|mask=%u|other_op=%s|other_line=%d|other_mask=%u|", kind_name(kind), line,
                mask, kind_name(g.kind), g.line, g.mask) + where(t) + "|" + other(base + l));
  }
  unsigned char result[32][16];
  unsigned votes = 0;
  for (int l = 0; l < lanes; ++l)
    if (((mask >> l) & 1u) && r.fibers[base + l].value[0]) votes |= 1u << l;
  for (int l = 0; l < lanes; ++l) {
    if (!((mask >> l) & 1u)) continue;
    const Fiber& g = r.fibers[base + l];
    if (kind <= SHFL_XOR) {
      const int w = g.width, seg = l & ~(w - 1);
      int src = l;
      if (kind == SHFL) src = seg + (((g.arg % w) + w) % w);
      if (kind == SHFL_UP) src = l - (int)(unsigned)g.arg >= seg ? l - (int)(unsigned)g.arg : l;
      if (kind == SHFL_DOWN) src = l + (int)(unsigned)g.arg < seg + w ? l + (int)(unsigned)g.arg : l;
      if (kind == SHFL_XOR) src = (l ^ g.arg) < seg + w ? (l ^ g.arg) : l;
      if (src < 0 || src >= 32) src = l;
      if (src >= lanes || !((mask >> src) & 1u)) {
        r.current = base + l;
        fatal(fmt("kind=shfl_source|op=%s|line=%d|mask=%u|lane=%d|src=%d|", kind_name(kind), line, mask, l, src) +
              where(base + l));
      }
      std::memcpy(result[l], r.fibers[base + src].value, size);
    } else {
      unsigned v = kind == BALLOT ? votes : kind == ANY ? votes != 0 : kind == ALL ? votes == (mask & (lanes >= 32 ? ~0u : (1u << lanes) - 1)) : 0;
      std::memcpy(result[l], &v, sizeof v);
    }
  }
  for (int l = 0; l < lanes; ++l) {
    if (!((mask >> l) & 1u)) continue;
    Fiber& g = r.fibers[base + l];
    std::memcpy(g.value, result[l], size);
    g.state = RUNNABLE;
  }
  // the collective orders its lanes' earlier accesses before their later ones (ordered())
  r.warp_log[(t / 32) * WARP_LOG + r.warp_sync[t / 32] % WARP_LOG] = mask;
  ++r.warp_sync[t / 32];
  std::memcpy(value, f.value, size);
}

unsigned activemask() {
  Runtime& r = R();
  if (!r.active) return 1;
  const int base = r.current - lane_of(r.current);
  unsigned m = 0;
  for (int l = 0; l < 32 && base + l < r.nthreads; ++l)
    if (r.fibers[base + l].state != EXITED) m |= 1u << l;
  return m;
}

void atomic_enter(int line) {
  Runtime& r = R();
  r.in_atomic = true;
  if (r.profile) r.profile->atomic_seen = false, r.profile->atomic_line = line;
}
void atomic_exit() { R().in_atomic = false; }

// Threads run one at a time here, so a read-then-atomicCAS update never meets another thread's; on a
// GPU threads updating one address at once make all but one CAS fail (the last of a warp's 32 lanes
// fails 31 times), and a kernel that does not retry until it succeeds loses their updates. So a
// thread's atomicCAS on an address another thread of the block CASed fails as contended (the header
// returns a value other than `compare` and stores nothing), and so do up to CONTENTION_SPREAD - 1 more CASes
// there that would succeed: a retry loop goes on until one succeeds; a thread that reaches its end
// first is reported (cas_once): no CAS, one with no retry loop, or one that gives up after a fixed
// number of tries (a cheater's 3 tries passed when every contended CAS failed once). A plain store to
// the address ends its contention (a leader word reset between rounds: the next round's first CAS wins).
constexpr int CONTENTION_SPREAD = 32;  // a contended CAS fails 1 to 32 times (drawn), as among a warp's lanes
std::unordered_map<uintptr_t, long long>& contention_of(uintptr_t a) {
  Runtime& r = R();
  bool is_shared = r.dynamic && a - (uintptr_t)r.dynamic < r.dynamic_len;
  for (const auto& x : r.shared_ranges) is_shared |= a - x.lo < x.len;
  return is_shared ? r.cas_last_shared : r.cas_last;
}
bool cas_contended(void* address, int line) {
  Runtime& r = R();
  if (!r.active || r.current < 0) return false;
  Fiber& f = r.fibers[r.current];
  const uintptr_t a = (uintptr_t)address;
  const long long me = r.block_linear * r.nthreads + r.current + 1;
  if (f.cas_lost == a) {  // a retry that would succeed: fails while contention lasts
    if (f.cas_fails_left-- > 0) return true;
    f.cas_lost = 0;
    contention_of(a)[a] = me;
    return false;
  }
  auto& last = contention_of(a)[a];
  const bool contended = last != 0 && last != me;
  last = me;
  if (contended) f.cas_lost = a, f.cas_line = line, f.cas_fails_left = (int)(r.rng() % CONTENTION_SPREAD);
  return contended;
}


void trap(int line) {
  Runtime& r = R();
  if (!r.active) abort();
  fatal(fmt("kind=trap|line=%d|", line) + where(r.current));
}

void* dynamic_shared() { return R().dynamic; }

int kernel_printf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  const int n = vprintf(format, ap);
  va_end(ap);
  return n;
}

// Advances like a GPU's cycle counter between two reads (tens of cycles, never the same step): a
// kernel that stores only when two back-to-back clock64() reads differ by exactly 1 told the
// emulator from a GPU (red team, 2026-12-04).
long long clock_counter() {
  Runtime& r = R();
  r.clock_state = r.clock_state * 6364136223846793005ull + 1442695040888963407ull;
  return r.clock += 24 + (long long)(r.clock_state >> 59);
}

int last_error(bool reset) {
  Runtime& r = R();
  const int e = r.last_error;
  if (reset) r.last_error = 0;
  return e;
}

// An element-wise lab's launcher starts at most gpu_cap blocks on a GPU (1056: 8 per SM), so that large
// inputs need a grid-stride loop; the lab's sizes stop near 2^20, which that grid covers when a thread
// handles a few elements without looping. Here it starts at most CPU_GRID_CAP, so such a kernel fails on
// the lab's own sizes; the speed estimate's runs (profile on) keep the GPU's grid, which they describe.
constexpr long long CPU_GRID_CAP = 24;
long long grid_cap(long long gpu_cap) {
  const Runtime& r = R();
  return r.profile && r.profile->mode ? gpu_cap : (gpu_cap < CPU_GRID_CAP ? gpu_cap : CPU_GRID_CAP);
}

int launch_raw(dim3 grid, dim3 block, size_t shared_bytes, void (*body)(void*), void* context) {
  Runtime& r = R();
  const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  if (r.active || threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.y > 65535 || grid.z > 65535 || shared_bytes > (227u << 10)) {
    r.last_error = cudaErrorInvalidConfiguration;
    return r.last_error;
  }
  if (r.profile && r.profile->mode) {
    r.profile->launches.push_back(Launch{grid, block, shared_bytes});
    if (r.profile->mode == 2) return 0;  // dry: the launch's shape only
  }
  const int n = (int)threads;
  if (r.stacks_len < n * STACK) {
    if (r.stacks) munmap(r.stacks, r.stacks_len);
    r.stacks_len = n * STACK;
    r.stacks = (char*)mmap(nullptr, r.stacks_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r.stacks == MAP_FAILED) {
      r.stacks = nullptr, r.stacks_len = 0;
      r.last_error = cudaErrorLaunchFailure;
      return r.last_error;
    }
    for (int t = 0; t < n; ++t) mprotect(r.stacks + t * STACK, 4096, PROT_NONE);  // overflow faults, not corrupts
  }
  if (!r.cells) r.cells = (Cell*)calloc(CELLS, sizeof(Cell));
  if (shared_bytes > r.dynamic_cap) {
    free(r.dynamic);
    r.dynamic = (char*)calloc(1, shared_bytes);
    r.dynamic_cap = shared_bytes;
  }
  r.dynamic_len = shared_bytes;
  if (r.dynamic_init.size() < shared_bytes) r.dynamic_init.resize(shared_bytes, Init{0, 0, -1});
  r.nthreads = n;
  r.fibers.assign(n, Fiber{});
  r.warp_sync.assign((n + 31) / 32, 0);
  r.warp_log.assign((n + 31) / 32 * WARP_LOG, 0);
  r.body = body, r.context = context;
  r.aborted = false, r.tracking = true;
  // the calling thread's stack holds the launcher's arguments, which every thread reads
  pthread_attr_t attr;
  void* stack_lo = nullptr;
  size_t stack_size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &stack_lo, &stack_size);
    pthread_attr_destroy(&attr);
  }
  r.host_lo = (uintptr_t)stack_lo, r.host_len = stack_size;
  builtins.blockDim = block, builtins.gridDim = grid;
  r.blocks = (long long)grid.x * grid.y * grid.z;
  r.device_writer.clear(), r.device_early_reader.clear(), r.device_untracked = false, r.cas_last.clear();
  r.cas_last_shared.clear();
  r.launch_stamp = r.stamp + 1;  // the first block's epoch  // a launch sees the whole of the one before it
  r.active = true;
  // Blocks run in the grid's order (faults name the first block that makes them) until one has written
  // __device__ memory; the blocks after it run in a random order. A GPU runs blocks in any order, and a
  // kernel whose blocks hand results on through __device__ memory (the grid's last block, or any block
  // chosen by its index, reading the others' partials) would otherwise be right here.
  r.order.resize(r.blocks);
  for (long long b = 0; b < r.blocks; ++b) r.order[b] = b;
  bool shuffled = false;
  for (long long turn = 0; turn < r.blocks && !r.aborted; ++turn) {
    if (!shuffled && turn > 0 && !r.device_writer.empty()) {
      std::shuffle(r.order.begin() + turn, r.order.end(), r.rng);
      shuffled = true;
    }
    const long long linear = r.order[turn];
    const unsigned x = (unsigned)(linear % grid.x), y = (unsigned)(linear / grid.x % grid.y),
                   z = (unsigned)(linear / ((long long)grid.x * grid.y));
    builtins.blockIdx = uint3{x, y, z};
    r.block_linear = linear;
    r.run_position = turn;
    for (int t = 0; t < n; ++t) {
      Fiber& f = r.fibers[t];
      f.state = RUNNABLE;
      f.cas_lost = 0;
      f.tid = uint3{(unsigned)(t % block.x), (unsigned)(t / block.x % block.y), (unsigned)(t / (block.x * block.y))};
      f.sp = initial_stack(r.stacks + t * STACK, STACK);
    }
    r.at_barrier = r.exited = 0;
    ++r.stamp, r.cells_used = 0, r.tracking = true;
    r.block_stamp = r.stamp;  // nothing of this block's shared memory is written yet
    r.ticket = false;
    r.cas_last_shared.clear();  // a block's threads contend for its shared memory (its own on a GPU)
    r.pending.clear();
    for (auto& s : r.warp_sync) s = 0;
    profile_block_begin(r);
    run_block();
    if (!r.aborted) profile_block_end(r);
    if (!r.aborted) flush_uninit();  // a stopped kernel: its own fault says what matters
    r.pending.clear();
  }
  r.active = false;
  r.current = -1;
  return 0;
}

}  // namespace __cuda_cpu

// ---- what GCC's -fsanitize=thread calls in the student's object (TSan itself is not linked) ----
#define CUDA_CPU_HOOKS(n)                                                                                    \
  extern "C" void __tsan_read##n(void* p) { access(p, n, false, __builtin_return_address(0)); }              \
  extern "C" void __tsan_write##n(void* p) { access(p, n, true, __builtin_return_address(0)); }              \
  extern "C" void __tsan_unaligned_read##n(void* p) { access(p, n, false, __builtin_return_address(0)); }    \
  extern "C" void __tsan_unaligned_write##n(void* p) { access(p, n, true, __builtin_return_address(0)); }    \
  extern "C" void __tsan_volatile_read##n(void* p) { access(p, n, false, __builtin_return_address(0)); }     \
  extern "C" void __tsan_volatile_write##n(void* p) { access(p, n, true, __builtin_return_address(0)); }
CUDA_CPU_HOOKS(1)
CUDA_CPU_HOOKS(2)
CUDA_CPU_HOOKS(4)
CUDA_CPU_HOOKS(8)
CUDA_CPU_HOOKS(16)
#undef CUDA_CPU_HOOKS
static void access_range(void* p, unsigned long size, bool write, void* pc) {
  for (unsigned long k = 0; k < size && !(rt && rt->aborted); k += 8)
    access((char*)p + k, size - k < 8 ? (int)(size - k) : 8, write, pc);
}
extern "C" void __tsan_read_range(void* p, unsigned long size) { access_range(p, size, false, __builtin_return_address(0)); }
extern "C" void __tsan_write_range(void* p, unsigned long size) { access_range(p, size, true, __builtin_return_address(0)); }
extern "C" void __tsan_init() {}
extern "C" void __tsan_func_entry(void*) {}
extern "C" void __tsan_func_exit() {}
extern "C" void __tsan_vptr_update(void**, void*) {}
extern "C" void __tsan_vptr_read(void**) {}

// assert() in a kernel: a fault of that thread (the library is linked -Bsymbolic, so the
// student's object calls this one, not the C library's, which would end the process)
extern "C" void __assert_fail(const char* expr, const char*, unsigned int line, const char*) {
  Runtime& r = R();
  if (!r.active || r.current < 0) abort();
  std::string e(expr);
  for (char& c : e)
    if (c == '|' || c == '\n') c = ' ';
  fatal(fmt("kind=assert|line=%u|expr=%s|", line, e.c_str()) + where(r.current));
}

// ---- what cuda_cpu.py calls, through ctypes ----
// buffers: n x (address, bytes, guard address, guard bytes, element bytes), in the launcher's order
extern "C" void cuda_cpu_begin(int n, const unsigned long long* buffers) {
  Runtime& r = R();
  r.report.clear();
  r.nbuffers = n < 8 ? n : 8;
  for (int b = 0; b < r.nbuffers; ++b) {
    const unsigned long long* d = buffers + 5 * b;
    r.buffers[b] = Buffer{(uintptr_t)d[0], (uintptr_t)d[1], (uintptr_t)d[2], (uintptr_t)d[3], (long long)d[4]};
  }
  for (auto& c : r.oob_count) c[0] = c[1] = 0;
  r.race_count = r.wild_count = r.double_writes = r.uninit_count = r.input_writes = r.untracked = r.cross_reads = r.device_cross = r.cas_once = 0;
  r.pending.clear();
  if (r.nbuffers) r.written.assign(r.buffers[r.nbuffers - 1].len / r.buffers[r.nbuffers - 1].elem, {0u, 0u, false});
  r.last_error = 0;
  Dl_info info;
  if (dladdr((void*)&builtins, &info)) r.lib_base = (uintptr_t)info.dli_fbase;
  for (auto& s : r.shared_ranges) s.lo = r.lib_base + s.off;
  r.writable.clear(), r.readonly.clear();
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t, void*) {
        Runtime& rr = R();
        if ((uintptr_t)i->dlpi_addr != rr.lib_base) return 0;
        for (int k = 0; k < i->dlpi_phnum; ++k) {
          const ElfW(Phdr)& p = i->dlpi_phdr[k];
          if (p.p_type != PT_LOAD) continue;
          auto seg = std::make_pair((uintptr_t)(i->dlpi_addr + p.p_vaddr), (uintptr_t)p.p_memsz);
          (p.p_flags & PF_W ? rr.writable : rr.readonly).push_back(seg);
        }
        return 1;
      },
      nullptr);
}

// the faults of the last launch, one per line, fields key=value separated by |; then counts
extern "C" const char* cuda_cpu_report() {
  Runtime& r = R();
  static std::string text;
  text = r.report;
  r.report.swap(text);
  for (int b = 0; b < r.nbuffers; ++b)
    for (int w = 0; w < 2; ++w)
      if (r.oob_count[b][w] > 1) r.report += fmt("kind=count|buf=%d|rw=%s|count=%lld\n", b, w ? "write" : "read", r.oob_count[b][w]);
  if (r.double_writes > 1) r.report += fmt("kind=count|double=1|count=%lld\n", r.double_writes);
  if (r.input_writes > 1) r.report += fmt("kind=count|input=1|count=%lld\n", r.input_writes);
  if (r.race_count > 1) r.report += fmt("kind=count|race=1|count=%lld\n", r.race_count);
  if (r.uninit_count > 1) r.report += fmt("kind=count|uninit=1|count=%lld\n", r.uninit_count);
  r.report.swap(text);  // r.report keeps the faults only: calling twice says the same
  return text.c_str();
}

// the library's __shared__ variables (cuda_cpu.py finds them by the names the source declares
// __shared__): n x (offset in the library, bytes); the initcheck watches them (and the dynamic
// shared memory) from the next cuda_cpu_begin on
extern "C" void cuda_cpu_shared(int n, const unsigned long long* ranges) {
  Runtime& r = R();
  r.shared_ranges.clear();
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    r.shared_ranges.push_back(SharedRange{(uintptr_t)ranges[2 * i], (uintptr_t)ranges[2 * i + 1], 0, total});
    total += ranges[2 * i + 1];
  }
  r.static_init.assign(total, Init{0, 0, -1});
}

// ---- the speed estimate's counters (lab/estimate.py) ----
// mode 1: count the launches that follow (from zero); 2: record launches without running them (the
// launcher's grid for a shape, with no memory behind the pointers); 0: stop (the counts stay readable)
extern "C" void cuda_cpu_profile(int mode) {
  Runtime& r = R();
  if (!r.profile) r.profile = new Profile();
  Profile& p = *r.profile;
  if (mode) {
    Slot *instance_slots = p.instance_slots, *sector_slots = p.sector_slots, *atomic_slots = p.atomic_slots;
    p = Profile();
    if (mode == 1) {
      if (!instance_slots) {
        instance_slots = (Slot*)calloc(INSTANCE_SLOTS, sizeof(Slot));
        sector_slots = (Slot*)calloc(SECTOR_SLOTS, sizeof(Slot));
        atomic_slots = (Slot*)calloc(ATOMIC_SLOTS, sizeof(Slot));
      } else {
        memset(instance_slots, 0, INSTANCE_SLOTS * sizeof(Slot));
        memset(sector_slots, 0, SECTOR_SLOTS * sizeof(Slot));
        memset(atomic_slots, 0, ATOMIC_SLOTS * sizeof(Slot));
      }
    }
    p.instance_slots = instance_slots, p.sector_slots = sector_slots, p.atomic_slots = atomic_slots;
    if (mode == 1 && !(instance_slots && sector_slots && atomic_slots)) mode = 2;  // no memory: count nothing
  }
  p.mode = mode;
}

// What the counts say, one record a line, fields key=value separated by |
extern "C" const char* cuda_cpu_profile_report() {
  Runtime& r = R();
  static std::string text;
  text.clear();
  if (!r.profile) return "";
  const Profile& p = *r.profile;
  text += fmt("kind=totals|blocks=%lld|sampled_blocks=%lld|active_blocks=%lld|threads=%lld|active_threads=%lld|"
              "max_active_in_block=%lld|accesses=%lld|sampled_accesses=%lld|span=%lld\n",
              p.blocks, p.sampled_blocks, p.active_blocks, p.threads, p.active_threads, p.max_active_in_block,
              p.accesses, p.sampled_accesses, p.span);
  for (const Launch& l : p.launches)
    text += fmt("kind=launch|grid=%u,%u,%u|block=%u,%u,%u|shared=%zu\n", l.grid.x, l.grid.y, l.grid.z, l.block.x,
                l.block.y, l.block.z, l.shared);
  for (const Site& s : p.sites) {
    int best = 0;
    long long seen = 0;
    for (int i = 0; i < 4; ++i) {
      seen += s.stride_count[i];
      if (s.stride_count[i] > s.stride_count[best]) best = i;
    }
    text += fmt("kind=site|pc=%lu|buf=%d|rw=%s|size=%d|accesses=%lld|bytes=%lld|instances=%lld|lanes=%lld|"
                "sampled_bytes=%lld|sectors=%lld|max_sectors=%d|stride=%lld|stride_count=%lld|strides_seen=%lld\n",
                (unsigned long)(s.pc - r.lib_base), s.buf, s.write ? "write" : "read", s.size, s.accesses, s.bytes,
                s.instances, s.lanes, s.sampled_bytes, s.sectors, s.max_sectors, s.stride[best], s.stride_count[best], seen);
  }
  if (p.atomics)
    text += fmt("kind=atomics|count=%lld|addresses=%lld|untracked=%lld|max_per_address=%lld|line=%d|buf=%d\n", p.atomics,
                p.atomic_addresses, p.atomic_untracked, p.atomic_max, p.atomic_line, p.atomic_buf);
  return text.c_str();
}
