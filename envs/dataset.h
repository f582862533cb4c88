// Datasets: the HLO files under a directory, with hlogym's fixed train/test
// split. A file is in the test split when FNV-1a-64 of its file name without
// extension is 0 mod 5 (about 20%), so the split never depends on which other
// files exist or on their order.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlogym {

enum class DatasetSplit { kAll, kTrain, kTest };

absl::StatusOr<DatasetSplit> DatasetSplitFromName(const std::string& name);
bool InTestSplit(const std::string& path);

// Every *.hlo file under `directory` (recursively), sorted by path, in the
// split. For the bundled data root ("data"), that is data/corpus/hlo and
// data/dataset/hlo; small twins and XLA outputs are not training modules.
absl::StatusOr<std::vector<std::string>> DatasetFiles(const std::string& directory,
                                                      DatasetSplit split);

}  // namespace hlogym
