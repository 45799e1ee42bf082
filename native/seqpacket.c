// Unix SOCK_SEQPACKET sockets with descriptor passing (SCM_RIGHTS), which Node has no API for: the
// system calls and a libuv poll that says when a socket is readable, nothing more. Everything else
// (framing, protocol, timeouts, closing descriptors) is TypeScript: src/agent/seqpacket.ts.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <node_api.h>
#include <uv.h>

// The most descriptors one received message may carry before the rest are cut (MSG_CTRUNC).
#define MAX_RECEIVED_FDS 8

// Throws an Error whose code is the errno's name (EAGAIN, ECONNREFUSED...), as Node's own errors.
static napi_value throw_errno(napi_env env, const char *call, int err) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s", call, strerror(err));
  const char *code = strerrorname_np(err);
  napi_throw_error(env, code ? code : "EUNKNOWN", message);
  return NULL;
}

static napi_value int_value(napi_env env, int value) {
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

// Reads the arguments of a call into args; false (with a TypeError thrown) when fewer were given.
static bool get_args(napi_env env, napi_callback_info info, size_t count, napi_value *args) {
  size_t given = count;
  napi_get_cb_info(env, info, &given, args, NULL, NULL);
  if (given < count) {
    napi_throw_type_error(env, NULL, "too few arguments");
    return false;
  }
  return true;
}

static bool get_int(napi_env env, napi_value value, int *out) {
  if (napi_get_value_int32(env, value, out) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a number");
    return false;
  }
  return true;
}

// A filesystem socket address from a path; false (with an Error thrown) when it does not fit.
static bool get_address(napi_env env, napi_value value, struct sockaddr_un *address) {
  memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a path");
    return false;
  }
  if (length == 0 || length >= sizeof address->sun_path) {
    throw_errno(env, "socket path", ENAMETOOLONG);
    return false;
  }
  napi_get_value_string_utf8(env, value, address->sun_path, sizeof address->sun_path, &length);
  return true;
}

static int new_socket(void) { return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }

// Closes a socket whose set-up failed in call, and throws that failure.
static napi_value close_and_throw(napi_env env, int fd, const char *call) {
  int err = errno;
  close(fd);
  return throw_errno(env, call, err);
}

// listen(path, backlog): a non-blocking listening socket bound to path.
static napi_value Listen(napi_env env, napi_callback_info info) {
  napi_value args[2];
  struct sockaddr_un address;
  int backlog;
  if (!get_args(env, info, 2, args) || !get_address(env, args[0], &address) || !get_int(env, args[1], &backlog)) {
    return NULL;
  }
  int fd = new_socket();
  if (fd < 0) return throw_errno(env, "socket", errno);
  if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) return close_and_throw(env, fd, "bind");
  if (listen(fd, backlog) < 0) return close_and_throw(env, fd, "listen");
  return int_value(env, fd);
}

// connect(path): a non-blocking socket connected to path (a Unix connect completes at once or fails).
static napi_value Connect(napi_env env, napi_callback_info info) {
  napi_value args[1];
  struct sockaddr_un address;
  if (!get_args(env, info, 1, args) || !get_address(env, args[0], &address)) return NULL;
  int fd = new_socket();
  if (fd < 0) return throw_errno(env, "socket", errno);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) return close_and_throw(env, fd, "connect");
  return int_value(env, fd);
}

// accept(fd): the next connection's non-blocking socket, or -1 when none is waiting.
static napi_value Accept(napi_env env, napi_callback_info info) {
  napi_value args[1];
  int fd;
  if (!get_args(env, info, 1, args) || !get_int(env, args[0], &fd)) return NULL;
  int connection;
  do {
    connection = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  } while (connection < 0 && errno == EINTR);
  if (connection < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return int_value(env, -1);
    return throw_errno(env, "accept", errno);
  }
  return int_value(env, connection);
}

// send(fd, data, passFd): one message; passFd >= 0 goes with it as SCM_RIGHTS. Throws EAGAIN when
// the socket's buffer is full rather than waiting.
static napi_value Send(napi_env env, napi_callback_info info) {
  napi_value args[3];
  int fd, pass_fd;
  if (!get_args(env, info, 3, args) || !get_int(env, args[0], &fd) || !get_int(env, args[2], &pass_fd)) return NULL;
  void *data;
  size_t length;
  if (napi_get_buffer_info(env, args[1], &data, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a Buffer");
    return NULL;
  }
  struct iovec iov = {.iov_base = data, .iov_len = length};
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1};
  union {
    char buffer[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  if (pass_fd >= 0) {
    memset(&control, 0, sizeof control);
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof control.buffer;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &pass_fd, sizeof(int));
  }
  ssize_t sent;
  do {
    sent = sendmsg(fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return throw_errno(env, "sendmsg", errno);
  return NULL;
}

// receive(fd, maxBytes): the next message as {data, fds, truncated}, or null when none is waiting.
// A message of no bytes and no descriptors is the peer's end. The descriptors are the caller's to
// close; truncated says the message or its descriptors were longer than there was room for.
static napi_value Receive(napi_env env, napi_callback_info info) {
  napi_value args[2];
  int fd, max_bytes;
  if (!get_args(env, info, 2, args) || !get_int(env, args[0], &fd) || !get_int(env, args[1], &max_bytes)) return NULL;
  if (max_bytes <= 0) {
    napi_throw_range_error(env, NULL, "maxBytes must be positive");
    return NULL;
  }
  char *data = malloc(max_bytes);
  if (data == NULL) return throw_errno(env, "malloc", ENOMEM);
  struct iovec iov = {.iov_base = data, .iov_len = max_bytes};
  union {
    char buffer[CMSG_SPACE(sizeof(int) * MAX_RECEIVED_FDS)];
    struct cmsghdr align;
  } control;
  struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buffer,
                           .msg_controllen = sizeof control.buffer};
  ssize_t received;
  do {
    received = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) {
    int err = errno;
    free(data);
    if (err == EAGAIN || err == EWOULDBLOCK) {
      napi_value null;
      napi_get_null(env, &null);
      return null;
    }
    return throw_errno(env, "recvmsg", err);
  }
  napi_value result, bytes, fds, truncated;
  napi_create_object(env, &result);
  napi_create_buffer_copy(env, received, data, NULL, &bytes);
  free(data);
  napi_create_array(env, &fds);
  uint32_t count = 0;
  for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int passed;
      memcpy(&passed, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
      napi_set_element(env, fds, count++, int_value(env, passed));
    }
  }
  napi_get_boolean(env, (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0, &truncated);
  napi_set_named_property(env, result, "data", bytes);
  napi_set_named_property(env, result, "fds", fds);
  napi_set_named_property(env, result, "truncated", truncated);
  return result;
}

// A libuv poll on a socket calling a JavaScript function whenever the socket is readable (or the
// peer has gone). It keeps the event loop alive until unwatched.
typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
  bool stopped;
} watcher;

static void on_readable(uv_poll_t *poll, int status, int events) {
  (void)status;
  (void)events;
  watcher *w = poll->data;
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, receiver;
  napi_get_reference_value(env, w->callback, &callback);
  napi_get_global(env, &receiver);
  // make_callback, not call_function: it runs the microtasks and nextTicks the callback queued.
  if (napi_make_callback(env, w->context, receiver, callback, 0, NULL, NULL) == napi_pending_exception) {
    napi_value error;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error);
  }
  napi_close_handle_scope(env, scope);
}

static void free_watcher(uv_handle_t *handle) { free(handle->data); }

// watch(fd, onReadable): starts a watcher; its handle is for unwatch.
static napi_value Watch(napi_env env, napi_callback_info info) {
  napi_value args[2];
  int fd;
  if (!get_args(env, info, 2, args) || !get_int(env, args[0], &fd)) return NULL;
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  watcher *w = calloc(1, sizeof *w);
  if (w == NULL) return throw_errno(env, "calloc", ENOMEM);
  int err = uv_poll_init(loop, &w->poll, fd);
  if (err < 0) {
    free(w);
    napi_throw_error(env, uv_err_name(err), uv_strerror(err));
    return NULL;
  }
  w->poll.data = w;
  w->env = env;
  napi_create_reference(env, args[1], 1, &w->callback);
  napi_value name;
  napi_create_string_utf8(env, "SeqpacketSocket", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &w->context);
  uv_poll_start(&w->poll, UV_READABLE | UV_DISCONNECT, on_readable);
  napi_value handle;
  napi_create_external(env, w, NULL, NULL, &handle);
  return handle;
}

// unwatch(handle): stops the watcher (before its socket is closed); again is harmless.
static napi_value Unwatch(napi_env env, napi_callback_info info) {
  napi_value args[1];
  if (!get_args(env, info, 1, args)) return NULL;
  watcher *w;
  if (napi_get_value_external(env, args[0], (void **)&w) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a watch handle");
    return NULL;
  }
  if (w->stopped) return NULL;
  w->stopped = true;
  uv_poll_stop(&w->poll);
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->context);
  // The handle is freed once libuv has closed it: after this call, even if made from its callback.
  uv_close((uv_handle_t *)&w->poll, free_watcher);
  return NULL;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"listen", NULL, Listen, NULL, NULL, NULL, napi_default, NULL},
      {"connect", NULL, Connect, NULL, NULL, NULL, napi_default, NULL},
      {"accept", NULL, Accept, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, Send, NULL, NULL, NULL, napi_default, NULL},
      {"receive", NULL, Receive, NULL, NULL, NULL, napi_default, NULL},
      {"watch", NULL, Watch, NULL, NULL, NULL, napi_default, NULL},
      {"unwatch", NULL, Unwatch, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
