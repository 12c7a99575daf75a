/* ZoneRequired's test, in C. */
#include <schedplug/testing.h>
#include <stdio.h>

int main(void) {
  char error[512];
  schedplug_test_plugin* plugin =
      schedplug_test_load(ZONE_REQUIRED_SO, "{}", error, sizeof error);
  if (plugin == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  schedplug_test_pod* pod = schedplug_test_pod_new("web");
  schedplug_test_node* nodes[2] = {schedplug_test_node_new("zoned"),
                                   schedplug_test_node_new("bare")};
  schedplug_test_node_label(nodes[0], "topology.kubernetes.io/zone", "a");
  schedplug_test_result rows[2];
  int failed = schedplug_test_run(plugin, pod, nodes, 2, rows, error,
                                  sizeof error) != SCHEDPLUG_SUCCESS ||
               rows[0].filter != SCHEDPLUG_SUCCESS ||
               rows[1].filter != SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE;
  if (failed) fprintf(stderr, "unexpected: %s / %s\n", error, rows[1].reason);
  schedplug_test_node_free(nodes[0]);
  schedplug_test_node_free(nodes[1]);
  schedplug_test_pod_free(pod);
  schedplug_test_unload(plugin);
  return failed;
}
