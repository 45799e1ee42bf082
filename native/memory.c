// glibc's malloc_trim, which Node has no API for: it gives the operating system back the free pages
// inside glibc's heap, not only those at its top. Responses and HTTP/2 buffers freed among long-lived
// allocations leave such pages resident (~35 MiB after a 2,000-sidecar sync). Where the C library is
// not glibc, trim does nothing. The caller decides when: src/util/malloc-trim.ts.
#include <stdbool.h>
#include <stdlib.h>  // first, for __GLIBC__: glibc's headers define it, the compiler does not
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <node_api.h>

// trim(): true when memory was given back.
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#ifdef __GLIBC__
  released = malloc_trim(0) == 1;
#endif
  napi_value result;
  napi_get_boolean(env, released, &result);
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"trim", NULL, Trim, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
