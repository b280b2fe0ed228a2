/* Operator Runtime: the C types every operator contract shares.
 *
 * Every backend library (liboprt_cpu.so, liboprt_nvidia.so, ...) exports the same
 * functions, declared in ops/<op>/<op>.h. A descriptor is created, asked for its
 * workspace size, executed any number of times, and destroyed:
 *
 *   oprt_softmax_descriptor* d;
 *   if (oprt_create_softmax_descriptor(&d, &out_view, &in_view, -1) != OPRT_STATUS_SUCCESS)
 *     fprintf(stderr, "%s\n", oprt_last_error());
 *   size_t ws; oprt_get_softmax_workspace_size(d, &ws);
 *   oprt_execute_softmax(d, workspace, ws, out_ptr, in_ptr, stream);
 *   oprt_destroy_softmax_descriptor(d);
 *
 * Validation happens in create; execute only checks what it alone can see (pointers,
 * workspace, that the descriptor is live and of the right operator).
 */
#ifndef OPERATOR_RUNTIME_OPRT_H
#define OPERATOR_RUNTIME_OPRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define OPRT_API __declspec(dllexport)
#else
#define OPRT_API __attribute__((visibility("default")))
#endif

#define OPRT_MAX_RANK 8

typedef enum {
  OPRT_DTYPE_F32 = 0,
  OPRT_DTYPE_F16 = 1,
  OPRT_DTYPE_BF16 = 2
} oprt_dtype;

typedef enum {
  OPRT_STATUS_SUCCESS = 0,
  OPRT_STATUS_NULL_POINTER = 1,        /* a required pointer argument was NULL */
  OPRT_STATUS_BAD_DTYPE = 2,           /* unknown dtype, or dtypes that do not fit together */
  OPRT_STATUS_BAD_SHAPE = 3,           /* rank or shapes invalid or not matching */
  OPRT_STATUS_BAD_STRIDES = 4,         /* negative strides, or an output that overlaps itself */
  OPRT_STATUS_BAD_ATTRIBUTE = 5,       /* dim out of range, keepdim not 0/1, ... */
  OPRT_STATUS_BAD_DESCRIPTOR = 6,      /* not a live descriptor of this operator and backend */
  OPRT_STATUS_WORKSPACE_TOO_SMALL = 7, /* workspace_size below what get_workspace_size said */
  OPRT_STATUS_NOT_SUPPORTED = 8,       /* valid request this backend does not implement */
  OPRT_STATUS_DEVICE_ERROR = 9,        /* the device runtime reported an error */
  OPRT_STATUS_OUT_OF_MEMORY = 10,
  OPRT_STATUS_INTERNAL = 11
} oprt_status;

/* A strided view of a tensor, in elements (not bytes), as torch describes it. */
typedef struct {
  int32_t dtype; /* oprt_dtype */
  int32_t rank;  /* 0 .. OPRT_MAX_RANK */
  int64_t shape[OPRT_MAX_RANK];
  int64_t strides[OPRT_MAX_RANK];
} oprt_tensor_view;

/* cudaStream_t on the nvidia backend; ignored by the cpu backend. */
typedef void* oprt_stream;

/* What went wrong in the last failing call on this thread, in words ("" if none). */
OPRT_API const char* oprt_last_error(void);

/* The backend this library implements: "cpu", "nvidia", ... */
OPRT_API const char* oprt_backend_name(void);

#ifdef __cplusplus
}
#endif
#endif
