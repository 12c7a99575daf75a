/* expect: too many arguments to function */
/* The C kit's node pod in its old form: (node, namespace, name, priority,
 * owner_kind), two strings a swap mixed up silently. It is refused now;
 * the name comes alone, the rest by name. */
#include <schedplug/testing.h>

void old_form(schedplug_test_node* node) {
  schedplug_test_node_pod(node, "default", "web-1", 0, "ReplicaSet");
}
