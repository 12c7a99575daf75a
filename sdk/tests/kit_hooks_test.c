/* The C test kit's calls of the hooks of plugins that own a resource (ABI
 * v1.6) on SlotOwner (slot_owner.cpp) and its careless build. */
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

static schedplug_test_pod* wanting(const char* name, const char* uid,
                                   const char* slots) {
  schedplug_test_pod* pod = schedplug_test_pod_new(name);
  schedplug_test_pod_uid(pod, uid);
  schedplug_test_pod_annotation(pod, "slots.example.com/want", slots);
  return pod;
}

int main(void) {
  char error[1024];
  schedplug_test_plugin* good =
      schedplug_test_load(SDK_TEST_SLOT_OWNER_SO, NULL, error, sizeof error);
  schedplug_test_plugin* careless = schedplug_test_load(
      SDK_TEST_SLOT_OWNER_CARELESS_SO, NULL, error, sizeof error);
  if (good == NULL || careless == NULL) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  schedplug_test_node* n = schedplug_test_node_new("n1");
  schedplug_test_node_label(n, "slots.example.com/count", "2");
  schedplug_test_pod* a = wanting("a", "uid-a", "2");
  schedplug_test_pod* b = wanting("b", "uid-b", "1");
  char reason[SCHEDPLUG_REASON_MAX];

  check(schedplug_test_reserve(good, a, n, reason, sizeof reason) ==
            SCHEDPLUG_SUCCESS,
        "a reserves both slots", reason);
  check(schedplug_test_reserve(good, b, n, reason, sizeof reason) ==
                SCHEDPLUG_UNSCHEDULABLE &&
            strcmp(reason, "node(s) had too few free slots") == 0,
        "b finds no slot", reason);
  schedplug_test_patch* patch = schedplug_test_patch_new();
  check(schedplug_test_pre_bind(good, a, n, patch, reason, sizeof reason) ==
            SCHEDPLUG_SUCCESS,
        "pre_bind succeeds", reason);
  const char* label =
      schedplug_test_patch_label(patch, "slots.example.com/assigned");
  const char* annotation =
      schedplug_test_patch_annotation(patch, "slots.example.com/assigned");
  check(schedplug_test_patch_count(patch) == 2 && label != NULL &&
            strcmp(label, "0-1") == 0 && annotation != NULL &&
            strcmp(annotation, "0,1") == 0,
        "pre_bind writes the label 0-1 and the annotation 0,1",
        label == NULL ? "(no label)" : label);
  check(schedplug_test_patch_label(patch, "other") == NULL,
        "a key not set is NULL", "");
  schedplug_test_unreserve(good, a, n);
  check(schedplug_test_reserve(good, b, n, reason, sizeof reason) ==
            SCHEDPLUG_SUCCESS,
        "b reserves once a is unreserved", reason);
  check(schedplug_test_unreserve_problem(good, a, n, error, sizeof error) == 0,
        "SlotOwner's unreserve is tolerant", error);

  /* Permit: a gang of two, the second allows the first. */
  schedplug_test_pod* g1 = wanting("g1", "uid-g1", "1");
  schedplug_test_pod* g2 = wanting("g2", "uid-g2", "1");
  schedplug_test_pod_annotation(g1, "slots.example.com/gang", "2");
  schedplug_test_pod_annotation(g2, "slots.example.com/gang", "2");
  uint64_t timeout = 0;
  check(schedplug_test_permit(good, g1, n, &timeout, reason, sizeof reason) ==
                SCHEDPLUG_WAIT &&
            timeout == 30000,
        "g1 waits 30 s", reason);
  check(schedplug_test_permit(good, g2, n, &timeout, reason, sizeof reason) ==
            SCHEDPLUG_SUCCESS,
        "g2 passes", reason);
  check(schedplug_test_permit_decisions(good, error, sizeof error) == 1 &&
            strcmp(error, "allow uid-g1 -> Success\n") == 0,
        "g2 allowed g1", error);

  schedplug_test_pod_annotation(b, "slots.example.com/hold", "yes");
  check(schedplug_test_pre_enqueue(good, b, reason, sizeof reason) ==
            SCHEDPLUG_UNSCHEDULABLE_AND_UNRESOLVABLE,
        "a held pod is gated", reason);

  /* The careless build: unreserve frees another pod's slots, the label
   * value has a comma, permit waits 20 minutes. */
  check(schedplug_test_reserve(careless, a, n, reason, sizeof reason) ==
            SCHEDPLUG_SUCCESS,
        "careless: a reserves", reason);
  check(schedplug_test_unreserve_problem(careless, g1, n, error,
                                         sizeof error) == 1 &&
            strstr(error, "unreserve() is not tolerant") != NULL,
        "careless: unreserve is reported", error);
  schedplug_test_reserve(careless, a, n, reason, sizeof reason);
  check(schedplug_test_pre_bind(careless, a, n, patch, reason, sizeof reason) ==
                SCHEDPLUG_ERROR &&
            strstr(reason, "was refused: its value \"0,1\" is not valid") !=
                NULL &&
            schedplug_test_patch_count(patch) == 0,
        "careless: the label is refused", reason);
  check(
      schedplug_test_permit(careless, g1, n, &timeout, reason, sizeof reason) ==
              SCHEDPLUG_ERROR &&
          strstr(reason, "the timeout must be from 1 ms to 900000 ms") != NULL,
      "careless: a 20-minute wait is refused", reason);

  schedplug_test_patch_free(patch);
  schedplug_test_pod_free(a);
  schedplug_test_pod_free(b);
  schedplug_test_pod_free(g1);
  schedplug_test_pod_free(g2);
  schedplug_test_node_free(n);
  schedplug_test_unload(good);
  schedplug_test_unload(careless);
  return failures == 0 ? 0 : 1;
}
