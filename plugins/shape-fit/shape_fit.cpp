// ShapeFit: prefer the nodes whose capacity left after this pod can still
// be filled by the cluster's typical pod shapes, so that free capacity is
// not stranded in pieces no pod fits (fragmentation-aware bin packing).
//
// For each node, the capacity left in every configured resource
// (allocatable - requested - the pod's request) is cut into `resolution`
// buckets; each shape from the `shapes` arg takes the number of buckets its
// requests need, rounded up. An unbounded multi-dimensional knapsack over
// that grid finds the most buckets any mix of shapes fills, and the score
// is that share of the grid, 0 to 100. The work is the same for every node
// whatever its size: (resolution + 1)^resources cells per shape.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <schedplug/plugin.hpp>
#include <string>
#include <vector>

namespace shape_fit {
namespace {

constexpr size_t kMaxResources = 4;
constexpr int64_t kMaxCells = int64_t{1} << 20;

struct Shape {
  std::array<int64_t, kMaxResources> requests{};
};

class ShapeFit {
 public:
  static constexpr schedplug_normalize_policy kNormalize =
      SCHEDPLUG_NORMALIZE_NONE;
  // Scores read the pod's requests only, and nothing changes over time.
  static constexpr uint64_t kHints = SCHEDPLUG_HINT_SCORE_IGNORES_POD_IDENTITY;

  explicit ShapeFit(const schedplug::Args& args) {
    args.allow_only({"resources", "shapes", "resolution"});
    resources_ = args.string_list("resources", {"cpu", "memory"});
    if (resources_.empty() || resources_.size() > kMaxResources) {
      throw schedplug::ArgsError(
          "arg \"resources\" must list 1 to " + std::to_string(kMaxResources) +
          " resource names, got " + std::to_string(resources_.size()));
    }
    for (size_t r = 1; r < resources_.size(); ++r) {
      if (std::find(resources_.begin(), resources_.begin() + r,
                    resources_[r]) != resources_.begin() + r) {
        throw schedplug::ArgsError("arg \"resources\" lists \"" +
                                   resources_[r] + "\" twice");
      }
    }
    resolution_ = static_cast<int>(args.integer("resolution", 32, 1, 256));
    int64_t cells = 1;
    for (size_t r = 0; r < resources_.size(); ++r) {
      cells *= resolution_ + 1;
    }
    if (cells > kMaxCells) {
      throw schedplug::ArgsError(
          "arg \"resolution\" " + std::to_string(resolution_) + " with " +
          std::to_string(resources_.size()) + " resources makes a grid of " +
          std::to_string(cells) + " cells, more than " +
          std::to_string(kMaxCells) +
          "; lower the resolution or the resources");
    }
    cells_ = static_cast<size_t>(cells);
    read_shapes(args.json());
  }

  struct PodState {
    std::array<int64_t, kMaxResources> requests{};
  };
  schedplug::Status BeginPod(const schedplug::Pod& pod, PodState& state,
                             schedplug::Gates&) const {
    for (size_t r = 0; r < resources_.size(); ++r) {
      state.requests[r] = pod.request(resources_[r]);
    }
    return schedplug::Status::Success();
  }

  schedplug::Status Score(const schedplug::Pod&, const schedplug::Node& node,
                          const PodState& pod, int64_t& score) const {
    const size_t dims = resources_.size();
    std::array<int64_t, kMaxResources> left{};
    for (size_t r = 0; r < dims; ++r) {
      left[r] = node.free(resources_[r]) - pod.requests[r];
      if (left[r] < 0) {  // NodeResourcesFit rejects the node anyway
        score = 0;
        return schedplug::Status::Success();
      }
    }
    score = packed_share(left);
    return schedplug::Status::Success();
  }

 private:
  void read_shapes(const nlohmann::json& doc) {
    const auto it = doc.find("shapes");
    if (it == doc.end() || !it->is_array() || it->empty()) {
      throw schedplug::ArgsError(
          "arg \"shapes\" is required: a non-empty list of the typical pods' "
          "requests, e.g. [{\"cpu\": 500, \"memory\": 1073741824}] "
          "(millicores, bytes, counts)");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const nlohmann::json& s = (*it)[i];
      const std::string where = "arg \"shapes[" + std::to_string(i) + "]\"";
      if (!s.is_object()) {
        throw schedplug::ArgsError(where +
                                   " must be an object of resource requests");
      }
      Shape shape;
      bool nonzero = false;
      for (const auto& [name, value] : s.items()) {
        const auto r = std::find(resources_.begin(), resources_.end(), name);
        if (r == resources_.end()) {
          throw schedplug::ArgsError(where + " requests \"" + name +
                                     "\", which is not in arg \"resources\"");
        }
        if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
            value.get<int64_t>() > (int64_t{1} << 50)) {
          throw schedplug::ArgsError(
              where + "." + name +
              " must be a whole number from 0 to 2^50 in the resource's "
              "canonical unit (millicores, bytes, counts), got " +
              value.dump());
        }
        shape.requests[static_cast<size_t>(r - resources_.begin())] =
            value.get<int64_t>();
        nonzero = nonzero || value.get<int64_t>() > 0;
      }
      if (!nonzero) {
        throw schedplug::ArgsError(where +
                                   " requests nothing; give it at "
                                   "least one request above 0");
      }
      shapes_.push_back(shape);
    }
  }

  // The share (0 to 100) of the grid over `left` that the best mix of
  // shapes fills.
  int64_t packed_share(const std::array<int64_t, kMaxResources>& left) const {
    const size_t dims = resources_.size();
    const int res = resolution_;
    // Row-major strides: the last resource varies fastest.
    std::array<size_t, kMaxResources> stride{};
    stride[dims - 1] = 1;
    for (size_t r = dims - 1; r > 0; --r) {
      stride[r - 1] = stride[r] * static_cast<size_t>(res + 1);
    }
    thread_local std::vector<int16_t> best;
    best.assign(cells_, 0);
    for (const Shape& shape : shapes_) {
      std::array<int, kMaxResources> need{};
      int16_t value = 0;
      bool fits = true;
      for (size_t r = 0; r < dims && fits; ++r) {
        const int64_t q = shape.requests[r];
        if (q == 0) continue;
        if (left[r] == 0) {
          fits = false;
          break;
        }
        // ceil(q * res / left), without overflow: q <= 2^50, res <= 256.
        const int64_t n = (q * res + left[r] - 1) / left[r];
        if (n > res) fits = false;
        need[r] = static_cast<int>(n);
        value = static_cast<int16_t>(value + n);
      }
      if (fits) add_shape(best.data(), stride, need, value);
    }
    return int64_t{best[cells_ - 1]} * 100 / (static_cast<int64_t>(dims) * res);
  }

  // One shape, any number of times: best[x] = max(best[x], best[x - need] +
  // value) for every cell x >= need, in ascending order so that best[x -
  // need] already counts this shape. The last resource is the inner loop;
  // when the shape needs some of the outer ones, the row it reads is an
  // earlier one, which lets the compiler vectorize the row.
  void add_shape(int16_t* best, const std::array<size_t, kMaxResources>& stride,
                 const std::array<int, kMaxResources>& need,
                 int16_t value) const {
    const size_t dims = resources_.size();
    const int res = resolution_;
    const size_t last = dims - 1;
    size_t back = 0;
    bool outer_need = false;
    for (size_t r = 0; r < dims; ++r) {
      back += static_cast<size_t>(need[r]) * stride[r];
      if (r < last && need[r] > 0) outer_need = true;
    }
    const int from = need[last];
    // Cells of the outer resources, odometer-style, each from its need.
    std::array<int, kMaxResources> at{};
    for (size_t r = 0; r < last; ++r) at[r] = need[r];
    for (;;) {
      size_t row = 0;
      for (size_t r = 0; r < last; ++r) {
        row += static_cast<size_t>(at[r]) * stride[r];
      }
      int16_t* dst = best + row;
      if (outer_need) {
        row_max(dst, dst - back, from, res, value);
      } else {
        for (int j = from; j <= res; ++j) {
          dst[j] = std::max<int16_t>(
              dst[j], static_cast<int16_t>(dst[j - from] + value));
        }
      }
      size_t r = last;
      while (r > 0) {
        --r;
        if (++at[r] <= res) break;
        at[r] = need[r];
        if (r == 0) return;
      }
      if (last == 0) return;
    }
  }

  static void row_max(int16_t* __restrict dst, const int16_t* __restrict src,
                      int from, int res, int16_t value) {
    for (int j = from; j <= res; ++j) {
      dst[j] = std::max<int16_t>(dst[j], static_cast<int16_t>(src[j] + value));
    }
  }

  std::vector<std::string> resources_;
  std::vector<Shape> shapes_;
  int resolution_ = 32;
  size_t cells_ = 0;
};

}  // namespace
}  // namespace shape_fit

SCHEDPLUG_PLUGIN(shape_fit::ShapeFit, "ShapeFit", "1.0.0")
