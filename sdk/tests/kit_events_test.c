/* The C test kit's declared events: CpuRoom (cpu_room.cpp) loaded through
 * schedplug/testing.h, declaring what makes room for a pod, and its
 * under-declared build, which the kit reports with the events to add. */
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
      schedplug_test_load(SDK_TEST_CPU_ROOM_SO, NULL, error, sizeof error);
  schedplug_test_plugin* under = schedplug_test_load(
      SDK_TEST_CPU_ROOM_UNDER_DECLARED_SO, NULL, error, sizeof error);
  if (right == NULL || under == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  check(schedplug_test_requeue_events(under) ==
            SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE,
        "the under-declared build declares one event", "");

  schedplug_test_pod* pod = schedplug_test_pod_new("web");
  schedplug_test_pod_request(pod, "cpu", 500);
  /* n1 runs a pod of 800m of its 1000m, then the pod leaves. */
  schedplug_test_node* full = schedplug_test_node_new("n1");
  schedplug_test_node_allocatable(full, "cpu", 1000);
  schedplug_test_node_pod(full, "batch-1");
  schedplug_test_node_pod_request(full, "cpu", 800);
  schedplug_test_node* freed = schedplug_test_node_new("n1");
  schedplug_test_node_allocatable(freed, "cpu", 1000);
  schedplug_test_node* added = schedplug_test_node_new("n2");
  schedplug_test_node_allocatable(added, "cpu", 4000);

  check(schedplug_test_change_events(full, freed) == SCHEDPLUG_EVENT_POD_DELETE,
        "a pod leaving is SCHEDPLUG_EVENT_POD_DELETE", "");
  check(schedplug_test_change_events(NULL, added) == SCHEDPLUG_EVENT_NODE_ADD,
        "a node added is SCHEDPLUG_EVENT_NODE_ADD", "");

  char problem[1024];
  check(schedplug_test_requeue_problem(right, pod, full, freed, problem,
                                       sizeof problem) == 0 &&
            problem[0] == '\0',
        "CpuRoom declares SCHEDPLUG_EVENT_POD_DELETE", problem);
  check(schedplug_test_requeue_problem(right, pod, NULL, added, problem,
                                       sizeof problem) == 0,
        "CpuRoom declares SCHEDPLUG_EVENT_NODE_ADD", problem);
  const char* want =
      "CpuRoom declares the events SCHEDPLUG_EVENT_NODE_UPDATE_ALLOCATABLE "
      "(kEvents), but its filter rejected pod \"web\" on node \"n1\" before "
      "the change (Unschedulable (\"node(s) lack free CPU\")) and passes it "
      "after (Success), and the change is SCHEDPLUG_EVENT_POD_DELETE, which "
      "it does not declare: kube-scheduler requeues a pod CpuRoom rejected "
      "only on the events it declared, so the pod would stay Pending until "
      "an unrelated event or the 5-minute flush of unschedulable pods; add "
      "it to kEvents, or declare 0 (every event)";
  check(schedplug_test_requeue_problem(under, pod, full, freed, problem,
                                       sizeof problem) == 1 &&
            strcmp(problem, want) == 0,
        "the under-declared build lacks SCHEDPLUG_EVENT_POD_DELETE", problem);
  check(schedplug_test_requeue_problem(under, pod, NULL, added, problem,
                                       sizeof problem) == 1 &&
            strstr(problem,
                   "a node added is SCHEDPLUG_EVENT_NODE_ADD, "
                   "which it does not declare") != NULL,
        "the under-declared build lacks SCHEDPLUG_EVENT_NODE_ADD", problem);

  /* The cycle after the change carries the broken promise as its error. */
  schedplug_test_result rows[2];
  schedplug_test_node* before[] = {full};
  schedplug_test_node* after[] = {freed, added};
  check(schedplug_test_run_after(under, pod, before, 1, after, 2, rows, error,
                                 sizeof error) == SCHEDPLUG_ERROR &&
            strcmp(error, want) == 0 && rows[0].filter == SCHEDPLUG_SUCCESS &&
            rows[1].filter == SCHEDPLUG_SUCCESS,
        "run_after fails the under-declared build's cycle", error);
  check(schedplug_test_run_after(right, pod, before, 1, after, 2, rows, error,
                                 sizeof error) == SCHEDPLUG_SUCCESS,
        "run_after passes CpuRoom's cycle", error);

  schedplug_test_node_free(full);
  schedplug_test_node_free(freed);
  schedplug_test_node_free(added);
  schedplug_test_pod_free(pod);
  schedplug_test_unload(right);
  schedplug_test_unload(under);
  return failures == 0 ? 0 : 1;
}
