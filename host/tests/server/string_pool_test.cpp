// The pool of strings nodes share, alone and through CompactNode.
#include "host/table/string_pool.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/model/models.hpp"
#include "host/table/compact_node.hpp"

namespace schedplug::host {
namespace {

std::string str(schedplug_str s) {
  return std::string(s.data ? s.data : "", s.len);
}

TEST(StringPool, SharesEqualStringsAndFreesTheLastReference) {
  StringPool pool;
  const char* a = pool.acquire("topology.kubernetes.io/zone");
  const char* b = pool.acquire(std::string("topology.kubernetes.io/zone"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(pool.strings(), 1u);
  pool.release(a, 27);
  EXPECT_EQ(pool.strings(), 1u);  // b still holds it
  pool.release(b, 27);
  EXPECT_EQ(pool.strings(), 0u);
  EXPECT_EQ(pool.bytes(), 0u);
}

TEST(StringPool, RefusesWhatItDoesNotKeep) {
  StringPool pool;
  EXPECT_EQ(pool.acquire(""), nullptr);
  EXPECT_EQ(pool.acquire(std::string(StringPool::kMaxLength + 1, 'x')),
            nullptr);
  // Distinct strings until the byte bound: then nullptr, never more.
  std::vector<std::string> taken;
  for (size_t i = 0;; ++i) {
    std::string s = std::to_string(i) + std::string(100, 'v');
    if (pool.acquire(s) == nullptr) break;
    taken.push_back(std::move(s));
    ASSERT_LT(i, size_t{1} << 20) << "the pool never filled up";
  }
  EXPECT_LE(pool.bytes(), StringPool::kMaxBytes);
  EXPECT_GT(pool.bytes(), StringPool::kMaxBytes - 256);
  // A string already in the pool is still shared when it is full.
  EXPECT_NE(pool.acquire(taken.front()), nullptr);
}

NodeData labelled(const std::string& name) {
  NodeData data;
  data.name = name;
  data.labels = {{"kubernetes.io/hostname", name},
                 {"topology.kubernetes.io/zone", "zone-a"}};
  data.taints = {{"dedicated", "gpu", "NoSchedule"}};
  data.allocatable = {{"cpu", 4000}, {"memory", 1 << 30}};
  data.annotations = {{"note", "an annotation value"}};
  return data;
}

TEST(CompactNode, SharesLabelStringsThroughThePoolAndReturnsThem) {
  const size_t before = StringPool::shared().strings();
  {
    const NodeModel r1(labelled("node-1")), r2(labelled("node-2"));
    const auto a = CompactNode::copy_of(r1.view());
    const auto b = CompactNode::copy_of(r2.view());
    const schedplug_node& va = a->view();
    const schedplug_node& vb = b->view();
    // Same key, same zone: one copy for both nodes.
    EXPECT_EQ(va.labels.items[1].key.data, vb.labels.items[1].key.data);
    EXPECT_EQ(va.labels.items[1].value.data, vb.labels.items[1].value.data);
    EXPECT_EQ(va.taints[0].effect.data, vb.taints[0].effect.data);
    EXPECT_EQ(va.allocatable.items[0].name.data,
              vb.allocatable.items[0].name.data);
    EXPECT_EQ(str(vb.labels.items[0].value), "node-2");
    EXPECT_EQ(schedplug_resource_get(vb.allocatable, "memory"), 1 << 30);
    // Names and annotation values stay in each node's own block.
    EXPECT_NE(va.name.data, vb.name.data);
    EXPECT_NE(va.annotations.items[0].value.data,
              vb.annotations.items[0].value.data);
    EXPECT_GT(StringPool::shared().strings(), before);
  }
  EXPECT_EQ(StringPool::shared().strings(), before);
}

// With the pool full, nodes keep their strings in their own blocks and read
// the same.
TEST(CompactNode, KeepsItsOwnCopiesWhenThePoolIsFull) {
  StringPool& pool = StringPool::shared();
  const size_t before = pool.strings();
  std::vector<std::string> filler;
  for (size_t i = 0;; ++i) {
    std::string s = "filler-" + std::to_string(i) + std::string(100, 'f');
    if (pool.acquire(s) == nullptr) break;
    filler.push_back(std::move(s));
  }
  {
    NodeData data = labelled("node-full");
    data.labels.push_back({"example.com/never-seen-before", "unique-value"});
    const NodeModel model(std::move(data));
    const auto compact = CompactNode::copy_of(model.view());
    const schedplug_node& v = compact->view();
    const schedplug_kv* kv =
        schedplug_kv_find(v.labels, "example.com/never-seen-before");
    ASSERT_NE(kv, nullptr);
    EXPECT_EQ(str(kv->value), "unique-value");
    // Not in the (full) pool, which would otherwise share it: the node's own.
    EXPECT_EQ(pool.acquire("example.com/never-seen-before"), nullptr);
    const schedplug_kv* host =
        schedplug_kv_find(v.labels, "kubernetes.io/hostname");
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(str(host->value), "node-full");
  }
  for (const std::string& s : filler) {
    // acquire() again to learn the pooled pointer, then drop both refs.
    const char* p = pool.acquire(s);
    ASSERT_NE(p, nullptr);
    pool.release(p, s.size());
    pool.release(p, s.size());
  }
  EXPECT_EQ(pool.strings(), before);
}

}  // namespace
}  // namespace schedplug::host
