#include "host/chain/chain_types.hpp"

#include <algorithm>

namespace schedplug::host {

size_t chunk_size_for(size_t count, unsigned pool_threads) {
  // Eight chunks per thread balance uneven nodes and bound how long the
  // chain runs past a deadline; four nodes keep claiming cheap.
  constexpr size_t kChunksPerThread = 8;
  constexpr size_t kMinChunk = 4;
  const size_t chunks =
      (static_cast<size_t>(pool_threads) + 1) * kChunksPerThread;
  return std::max(kMinChunk, (count + chunks - 1) / chunks);
}

}  // namespace schedplug::host
