/* Counts the bytes PyTorch's CPU allocator holds, in every thread.
 *
 * c10's DefaultCPUAllocator allocates with posix_memalign(64) and frees with
 * free(). The profiler's [memory] events (measure.py) see only threads with
 * the profiler enabled; gloo's worker threads drop the last reference to
 * some collective buffers, so under torch.distributed their frees are
 * missing there. Preloaded, this library keeps the live and peak bytes of
 * 64-byte-aligned posix_memalign blocks, whichever thread frees them:
 *
 *   LD_PRELOAD=memhook.so python3 fsdp.py
 *   ctypes.CDLL(None).vram_live() / vram_peak() / vram_reset_peak()
 *
 * Built by fsdp.py with cc; a measurement tool, not part of vram-opt.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define SLOTS (1u << 22) /* open addressing, power of two */
static void *keys[SLOTS];
static size_t sizes[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long live, peak;
/* An optional trace: (live bytes after the event, bytes allocated (> 0),
 * freed (< 0), or a marker (0, with the marker id in `mark`)). */
#define TRACE_MAX (1u << 22)
static struct { long long live, delta; int mark; } trace[TRACE_MAX];
static unsigned traced;
static int tracing;
static void note(long long delta, int mark) {
  if (tracing && traced < TRACE_MAX) {
    trace[traced].live = live;
    trace[traced].delta = delta;
    trace[traced].mark = mark;
    ++traced;
  }
}
static int (*real_memalign)(void **, size_t, size_t);
static void (*real_free)(void *);
#define TOMBSTONE ((void *)1)

static size_t slot(void *p) { return ((uintptr_t)p >> 6) * 2654435761u & (SLOTS - 1); }

static void init(void) {
  if (!real_memalign) {
    real_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  }
}
__attribute__((constructor)) static void setup(void) { init(); }

int posix_memalign(void **out, size_t alignment, size_t n) {
  init();
  int rc = real_memalign(out, alignment, n);
  if (rc || alignment != 64)
    return rc;
  pthread_mutex_lock(&lock);
  for (size_t i = slot(*out);; i = (i + 1) & (SLOTS - 1))
    if (!keys[i] || keys[i] == TOMBSTONE) {
      keys[i] = *out;
      sizes[i] = n;
      break;
    }
  live += n;
  if (live > peak)
    peak = live;
  note((long long)n, 0);
  pthread_mutex_unlock(&lock);
  return rc;
}

void free(void *p) {
  init();
  if (p) {
    pthread_mutex_lock(&lock);
    for (size_t i = slot(p); keys[i]; i = (i + 1) & (SLOTS - 1))
      if (keys[i] == p) {
        keys[i] = TOMBSTONE;
        live -= sizes[i];
        note(-(long long)sizes[i], 0);
        break;
      }
    pthread_mutex_unlock(&lock);
  }
  real_free(p);
}

long long vram_live(void) { return live; }
long long vram_peak(void) { return peak; }
/* Tracing for finding out what is live when (debugging a model). */
void vram_trace(int on) {
  pthread_mutex_lock(&lock);
  if (on && !tracing)
    traced = 0;
  tracing = on;
  pthread_mutex_unlock(&lock);
}
void vram_mark(int id) {
  pthread_mutex_lock(&lock);
  note(0, id);
  pthread_mutex_unlock(&lock);
}
unsigned vram_traced(void) { return traced; }
long long vram_trace_live(unsigned i) { return trace[i].live; }
long long vram_trace_delta(unsigned i) { return trace[i].delta; }
int vram_trace_mark(unsigned i) { return trace[i].mark; }
void vram_reset_peak(void) {
  pthread_mutex_lock(&lock);
  peak = live;
  pthread_mutex_unlock(&lock);
}
