/* The C test kit's builders for the declared data (ABI v1.2 and v1.3): DataEcho
 * (data_echo.c) loaded through schedplug/testing.h spells out what it sees
 * of each field. */
#include <schedplug/testing.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

/* DataEcho's reason for `pod` (labelled show=<part>) on `node`. `bits`
 * NULL: the cycle passes; else the test gave data the plugin did not
 * declare and its answer changes with it: the cycle fails with the kit's
 * sentence naming `bits`, and the row is still the host's. */
static void check_row(const schedplug_test_plugin* plugin,
                      schedplug_test_pod* pod, schedplug_test_node* node,
                      const char* part, const char* want, const char* bits) {
  char error[2048];
  char sentence[512];
  schedplug_test_result row;
  schedplug_test_pod_label(pod, "show", part);
  const schedplug_code code =
      schedplug_test_run(plugin, pod, &node, 1, &row, error, sizeof error);
  if (bits == NULL && code != SCHEDPLUG_SUCCESS) {
    fprintf(stderr, "show=%s: the cycle failed: %s\n", part, error);
    ++failures;
    return;
  }
  if (bits != NULL) {
    snprintf(sentence, sizeof sentence,
             "DataEcho reads data it did not declare (%s): on node \"n1\"",
             bits);
    if (code != SCHEDPLUG_ERROR ||
        strncmp(error, sentence, strlen(sentence)) != 0) {
      fprintf(stderr, "show=%s:\n  want error %s...\n  got %s\n", part,
              sentence, error);
      ++failures;
    }
  }
  if (row.filter != SCHEDPLUG_UNSCHEDULABLE || strcmp(row.reason, want) != 0) {
    fprintf(stderr, "show=%s:\n  want %s\n  got  %s\n", part, want, row.reason);
    ++failures;
  }
}
static void expect(const schedplug_test_plugin* plugin, schedplug_test_pod* pod,
                   schedplug_test_node* node, const char* part,
                   const char* want) {
  check_row(plugin, pod, node, part, want, NULL);
}

int main(void) {
  char error[512];
  schedplug_test_plugin* plugin =
      schedplug_test_load(SDK_TEST_DATA_ECHO_SO, NULL, error, sizeof error);
  schedplug_test_plugin* none = schedplug_test_load(
      SDK_TEST_DATA_ECHO_SO, "{\"data\": 0}", error, sizeof error);
  if (plugin == NULL || none == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }

  schedplug_test_pod* pod = schedplug_test_pod_new("web-3");
  schedplug_test_pod_priority(pod, 100);
  schedplug_test_pod_node_name(pod, "n7");
  schedplug_test_pod_nominated_node_name(pod, "n2");
  schedplug_test_pod_priority_class_name(pod, "high");
  schedplug_test_pod_owner(pod, "ReplicaSet", "web-5d8", 1);
  schedplug_test_pod_owner(pod, "ConfigMap", "cfg", 0);
  schedplug_test_pod_container(pod, "app", "nginx:1.27");
  schedplug_test_pod_container_request(pod, "memory", 1024);
  schedplug_test_pod_container_request(pod, "cpu", 250);
  schedplug_test_pod_container_limit(pod, "cpu", 500);
  schedplug_test_pod_container_port(pod, 8080, 0, NULL, NULL);
  schedplug_test_pod_container_port(pod, 53, 5353, "UDP", "127.0.0.1");
  schedplug_test_pod_container(pod, "sidecar", "envoy:1");
  schedplug_test_pod_container_request(pod, "cpu", 50);

  schedplug_test_node* node = schedplug_test_node_new("n1");
  schedplug_test_node_unschedulable(node, 1);
  schedplug_test_node_condition(node, "Ready", "False");
  schedplug_test_node_condition(node, "MemoryPressure", "False");
  schedplug_test_node_condition(node, "Ready", "True");
  schedplug_test_node_capacity(node, "cpu", 4000);
  schedplug_test_node_pod(node, "web-1");
  schedplug_test_node_pod_owner_kind(node, "ReplicaSet");
  schedplug_test_node_pod_label(node, "tier", "front");
  schedplug_test_node_pod_label(node, "app", "web");
  schedplug_test_node_pod_request(node, "cpu", 100);
  schedplug_test_node_pod(node, "db-0");
  schedplug_test_node_pod_namespace(node, "data");
  schedplug_test_node_pod_priority(node, 1000);
  schedplug_test_node_pod_request(node, "cpu", 250);

  expect(plugin, pod, node, "pod",
         "node=n7 nominated=n2 class=high "
         "owners=ReplicaSet/web-5d8/1,ConfigMap/cfg/0");
  expect(plugin, pod, node, "containers",
         "containers=2 app:nginx:1.27 req[cpu=250,memory=1024] lim[cpu=500] "
         "ports[8080/0/TCP/-,53/5353/UDP/127.0.0.1] "
         "sidecar:envoy:1 req[cpu=50] lim[] ports[]");
  expect(plugin, pod, node, "node",
         "unschedulable=1 conditions[Ready=True,MemoryPressure=False] "
         "capacity[cpu=4000] pod_count=2 requested[cpu=350]");
  expect(plugin, pod, node, "pods",
         "pods=2 data/db-0 1000 - labels[] req[cpu=250]; "
         "default/web-1 0 ReplicaSet labels[app=web,tier=front] req[cpu=100];");

  /* A plugin that declared nothing sees none of it; what it read of what
   * the test gave is named. */
  check_row(none, pod, node, "pod", "node=- nominated=- class=- owners=",
            "SCHEDPLUG_DATA_POD_NODE_NAME, SCHEDPLUG_DATA_POD_NOMINATED_NODE, "
            "SCHEDPLUG_DATA_POD_PRIORITY_CLASS and SCHEDPLUG_DATA_POD_OWNERS");
  check_row(none, pod, node, "containers", "containers=0",
            "SCHEDPLUG_DATA_POD_CONTAINERS");
  check_row(none, pod, node, "node",
            "unschedulable=0 conditions[] capacity[] pod_count=2 "
            "requested[cpu=350]",
            "SCHEDPLUG_DATA_NODE_UNSCHEDULABLE, SCHEDPLUG_DATA_NODE_CONDITIONS "
            "and SCHEDPLUG_DATA_NODE_CAPACITY");
  check_row(none, pod, node, "pods", "pods=0", "SCHEDPLUG_DATA_NODE_PODS");

  /* ABI v1.3 data. */
  schedplug_test_pod_volume(pod, "data", "persistentVolumeClaim", "pvc-1", 0);
  schedplug_test_pod_volume(pod, "cfg", "configMap", NULL, 1);
  const char* const zones[] = {"a", "b", NULL};
  const char* const n1[] = {"n1", NULL};
  const schedplug_test_requirement zone_in[] = {{"zone", "In", zones, 0}};
  const schedplug_test_requirement named[] = {{"disk", "Exists", NULL, 0},
                                              {"metadata.name", "In", n1, 1}};
  schedplug_test_pod_node_affinity(pod, 0, zone_in, 1);
  schedplug_test_pod_node_affinity(pod, 50, named, 2);
  const char* const web[] = {"app", "web", NULL};
  schedplug_test_pod_topology_spread(pod, 2, "zone", NULL, web);
  schedplug_test_pod_topology_spread(pod, 1, "rack", "ScheduleAnyway", NULL);
  schedplug_test_pod_affinity(pod, SCHEDPLUG_POD_ANTI_AFFINITY_REQUIRED, 0,
                              "kubernetes.io/hostname", web);
  schedplug_test_pod_affinity(pod, SCHEDPLUG_POD_AFFINITY_PREFERRED, 30, "zone",
                              NULL);
  const char* const image[] = {"img:1", "img@sha256:ab", NULL};
  schedplug_test_node_image(node, image, 1000);
  expect(plugin, pod, node, "volumes",
         "volumes[data:persistentVolumeClaim:pvc-1:rw,cfg:configMap:-:ro] "
         "images[img:1|img@sha256:ab=1000]");
  expect(plugin, pod, node, "terms",
         "node[0:zone In a,b|50:disk Exists :f:metadata.name In n1] "
         "spread[2 zone DoNotSchedule {app=web}|1 rack ScheduleAnyway] "
         "pod[1/30:zone|2/0:kubernetes.io/hostname {app=web}]");
  check_row(none, pod, node, "volumes", "volumes[] images[]",
            "SCHEDPLUG_DATA_POD_VOLUMES and SCHEDPLUG_DATA_NODE_IMAGES");
  check_row(
      none, pod, node, "terms", "node[] spread[] pod[]",
      "SCHEDPLUG_DATA_POD_NODE_AFFINITY, "
      "SCHEDPLUG_DATA_POD_TOPOLOGY_SPREAD and SCHEDPLUG_DATA_POD_AFFINITY");

  /* Explicit counts win over the listed pods'. */
  schedplug_test_node_pod_count(node, 9);
  schedplug_test_node_requested(node, "cpu", 900);
  expect(plugin, pod, node, "node",
         "unschedulable=1 conditions[Ready=True,MemoryPressure=False] "
         "capacity[cpu=4000] pod_count=9 requested[cpu=900]");

  schedplug_test_node_free(node);
  schedplug_test_pod_free(pod);
  schedplug_test_unload(none);
  schedplug_test_unload(plugin);
  return failures == 0 ? 0 : 1;
}
