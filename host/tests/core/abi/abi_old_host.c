/* A host that knows only ABI v1.0: compiled against the frozen v1.0 header,
 * it loads a plugin as the v1.0 rules say (it copies the descriptor fields
 * it knows and ignores the rest; its views have v1.0's struct_size and no
 * element sizes) and checks AbiProbe's answers.
 *
 * Run on AbiProbe built against today's header, it shows that a plugin
 * built against a newer header works on an older host: the probe must not
 * read past the views' struct_size. To catch that, every view sits in a
 * buffer whose bytes past struct_size are 0xff.
 *
 *   abi_old_host <plugin.so> <expected plugin version>
 * Exits 0 when every check holds; otherwise prints the failed checks. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "schedplug/plugin.h"

static int failures = 0;

#define CHECK(cond, ...)                       \
  do {                                         \
    if (!(cond)) {                             \
      fprintf(stderr, "FAILED: " __VA_ARGS__); \
      fprintf(stderr, "\n");                   \
      failures++;                              \
    }                                          \
  } while (0)

typedef struct poisoned_pod {
  schedplug_pod view;
  unsigned char poison[64];
} poisoned_pod;

typedef struct poisoned_node {
  schedplug_node view;
  unsigned char poison[64];
} poisoned_node;

static poisoned_node make_node(const char* name, const schedplug_kv* labels,
                               size_t label_count,
                               const schedplug_resource* allocatable,
                               const schedplug_resource* requested,
                               const schedplug_taint* taints,
                               size_t taint_count) {
  poisoned_node n;
  memset(&n, 0xff, sizeof n);
  memset(&n.view, 0, sizeof n.view);
  n.view.struct_size = sizeof(schedplug_node);
  n.view.name = schedplug_str_of(name);
  n.view.labels.items = labels;
  n.view.labels.count = label_count;
  n.view.allocatable.items = allocatable;
  n.view.allocatable.count = 1;
  n.view.requested.items = requested;
  n.view.requested.count = 1;
  n.view.taints = taints;
  n.view.taint_count = taint_count;
  n.view.pod_count = 3;
  return n;
}

static void logger(void* context, schedplug_log_level level,
                   schedplug_str msg) {
  (void)context;
  (void)level;
  (void)msg;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: abi_old_host <plugin.so> <version>\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "FAILED: dlopen: %s\n", dlerror());
    return 1;
  }
  schedplug_plugin_v1_fn entry = NULL;
  /* POSIX's way to turn dlsym's void* into a function pointer. */
  void* symbol = dlsym(lib, SCHEDPLUG_ENTRY_SYMBOL);
  memcpy(&entry, &symbol, sizeof entry);
  if (entry == NULL) {
    fprintf(stderr, "FAILED: no %s\n", SCHEDPLUG_ENTRY_SYMBOL);
    return 1;
  }
  const schedplug_plugin* raw = entry();
  CHECK(raw->abi_version == SCHEDPLUG_ABI_VERSION, "abi_version %u",
        raw->abi_version);
  CHECK(raw->struct_size >= sizeof(schedplug_plugin),
        "descriptor of %u bytes is smaller than v1.0's %zu", raw->struct_size,
        sizeof(schedplug_plugin));
  schedplug_plugin d;
  memset(&d, 0, sizeof d);
  memcpy(&d, raw, raw->struct_size < sizeof d ? raw->struct_size : sizeof d);
  CHECK(strcmp(d.name, "AbiProbe") == 0, "name %s", d.name);
  CHECK(strcmp(d.version, argv[2]) == 0, "version %s, expected %s", d.version,
        argv[2]);
  CHECK(d.refresh_period_ms == 1500, "refresh_period_ms %u",
        d.refresh_period_ms);
  CHECK(d.events ==
            (SCHEDPLUG_EVENT_NODE_ADD | SCHEDPLUG_EVENT_NODE_UPDATE_TAINT),
        "events %llu", (unsigned long long)d.events);

  schedplug_host host;
  memset(&host, 0, sizeof host);
  host.struct_size = sizeof host;
  host.log = logger;
  char text[SCHEDPLUG_REASON_MAX];
  schedplug_reason reason = {text, sizeof text};
  void* instance = NULL;
  CHECK(d.create("{}", 2, &host, &instance, &reason) == SCHEDPLUG_SUCCESS,
        "create");

  /* The pod: zone=a, 500m cpu, tolerates "dedicated". */
  const schedplug_kv pod_labels[] = {
      {schedplug_str_of("zone"), schedplug_str_of("a")}};
  const schedplug_resource pod_requests[] = {{schedplug_str_of("cpu"), 500}};
  const schedplug_toleration tolerations[] = {
      {schedplug_str_of("dedicated"), schedplug_str_of("Exists"),
       schedplug_str_of(""), schedplug_str_of(""), 0, 0}};
  poisoned_pod pod;
  memset(&pod, 0xff, sizeof pod);
  memset(&pod.view, 0, sizeof pod.view);
  pod.view.struct_size = sizeof(schedplug_pod);
  pod.view.labels.items = pod_labels;
  pod.view.labels.count = 1;
  pod.view.requests.items = pod_requests;
  pod.view.requests.count = 1;
  pod.view.tolerations = tolerations;
  pod.view.toleration_count = 1;

  const schedplug_kv zone_a[] = {
      {schedplug_str_of("zone"), schedplug_str_of("a")}};
  const schedplug_kv zone_b[] = {
      {schedplug_str_of("zone"), schedplug_str_of("b")}};
  const schedplug_resource alloc4000[] = {{schedplug_str_of("cpu"), 4000}};
  const schedplug_resource alloc1000[] = {{schedplug_str_of("cpu"), 1000}};
  const schedplug_resource used1000[] = {{schedplug_str_of("cpu"), 1000}};
  const schedplug_resource used800[] = {{schedplug_str_of("cpu"), 800}};
  const schedplug_taint dedicated[] = {{schedplug_str_of("dedicated"),
                                        schedplug_str_of(""),
                                        schedplug_str_of("NoSchedule")}};
  const schedplug_taint other[] = {{schedplug_str_of("other"),
                                    schedplug_str_of(""),
                                    schedplug_str_of("NoSchedule")}};
  poisoned_node fits =
      make_node("fits", zone_a, 1, alloc4000, used1000, dedicated, 1);
  poisoned_node elsewhere =
      make_node("elsewhere", zone_b, 1, alloc4000, used1000, NULL, 0);
  poisoned_node tainted =
      make_node("tainted", zone_a, 1, alloc4000, used1000, other, 1);
  poisoned_node full =
      make_node("full", zone_a, 1, alloc1000, used800, NULL, 0);

  CHECK(d.applies(instance, &pod.view) == 1, "applies");
  CHECK(d.filter(instance, &pod.view, &fits.view, &reason) == SCHEDPLUG_SUCCESS,
        "filter on a fitting node");
  text[0] = '\0';
  CHECK(d.filter(instance, &pod.view, &elsewhere.view, &reason) ==
                SCHEDPLUG_UNSCHEDULABLE &&
            strcmp(text, "node(s) in another zone") == 0,
        "filter on another zone: %s", text);
  text[0] = '\0';
  CHECK(d.filter(instance, &pod.view, &tainted.view, &reason) ==
                SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE &&
            strcmp(text, "node(s) had an untolerated taint") == 0,
        "filter on an untolerated taint: %s", text);
  text[0] = '\0';
  CHECK(d.filter(instance, &pod.view, &full.view, &reason) ==
                SCHEDPLUG_UNSCHEDULABLE &&
            strcmp(text, "node(s) lack cpu") == 0,
        "filter on a full node: %s", text);

  int64_t score = -1;
  CHECK(d.score(instance, &pod.view, &fits.view, &score, &reason) ==
                SCHEDPLUG_SUCCESS &&
            score == 4000 - 1000 - 500 + 2 + 3,
        "score %lld", (long long)score);
  schedplug_node_score scores[2] = {{schedplug_str_of("fits"), 2505},
                                    {schedplug_str_of("other"), 501}};
  CHECK(d.normalize_score(instance, &pod.view, scores, 2, &reason) ==
                SCHEDPLUG_SUCCESS &&
            scores[0].score == 100 && scores[1].score == 20,
        "normalize_score gave %lld, %lld", (long long)scores[0].score,
        (long long)scores[1].score);
  CHECK(d.refresh(instance, &reason) == SCHEDPLUG_SUCCESS, "first refresh");
  d.destroy(instance);
  dlclose(lib);
  if (failures == 0) printf("AbiProbe %s works on a v1.0 host\n", argv[2]);
  return failures == 0 ? 0 : 1;
}
