/* The C test kit's undeclared-data check: AppSpread (app_spread.cpp) loaded
 * through schedplug/testing.h reads the node's pods; its build that does not
 * declare SCHEDPLUG_DATA_NODE_PODS scores as the host would run it, and
 * schedplug_test_run fails with the bit to declare. */
#include <schedplug/testing.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what, const char* got) {
  if (!ok) {
    fprintf(stderr, "%s; got: %s\n", what, got);
    ++failures;
  }
}

int main(void) {
  char error[1024];
  schedplug_test_plugin* right =
      schedplug_test_load(SDK_TEST_APP_SPREAD_SO, NULL, error, sizeof error);
  schedplug_test_plugin* wrong = schedplug_test_load(
      SDK_TEST_APP_SPREAD_UNDECLARED_SO, NULL, error, sizeof error);
  if (right == NULL || wrong == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }

  schedplug_test_pod* pod = schedplug_test_pod_new("web-4");
  schedplug_test_pod_label(pod, "app", "web");
  schedplug_test_node* busy = schedplug_test_node_new("busy");
  schedplug_test_node_pod(busy, "web-1");
  schedplug_test_node_pod_label(busy, "app", "web");
  schedplug_test_node_pod(busy, "web-2");
  schedplug_test_node_pod_label(busy, "app", "web");
  schedplug_test_node* idle = schedplug_test_node_new("idle");
  schedplug_test_node* nodes[2] = {busy, idle};
  schedplug_test_result rows[2];

  check(schedplug_test_run(right, pod, nodes, 2, rows, error, sizeof error) ==
                SCHEDPLUG_SUCCESS &&
            rows[0].score == 80 && rows[1].score == 100,
        "AppSpread declaring SCHEDPLUG_DATA_NODE_PODS scores busy 80", error);

  const schedplug_code code =
      schedplug_test_run(wrong, pod, nodes, 2, rows, error, sizeof error);
  const char* want =
      "AppSpread reads data it did not declare (SCHEDPLUG_DATA_NODE_PODS): on "
      "node \"busy\" its score answered 100 without it (as schedplug-host "
      "sends it) and 80 with it (as the test gave it); add "
      "SCHEDPLUG_DATA_NODE_PODS to the data it declares (settings->data in "
      "create(), kData in the C++ layer)";
  check(code == SCHEDPLUG_ERROR && strcmp(error, want) == 0,
        "the kit names the undeclared bit", error);
  /* The rows are the host's: no pods seen, 100 everywhere. */
  check(rows[0].score == 100 && rows[1].score == 100,
        "the rows are as the host would answer", "");

  schedplug_test_node_free(idle);
  schedplug_test_node_free(busy);
  schedplug_test_pod_free(pod);
  schedplug_test_unload(wrong);
  schedplug_test_unload(right);
  return failures == 0 ? 0 : 1;
}
