// The environment matchers (matchers.h): a file the last sync left absent,
// the outcomes of the session's leases, and that its turns shared one lease.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "e2e/matchers.h"
#include "e2e/matchers_internal.h"

namespace tether::e2e {

namespace {

using detail::begin;
using detail::joined;
using detail::verdict;

matcher_result file_absent(const matcher_spec& spec, const observation& o) {
  auto r = begin(spec, fmt::format("file_absent \"{}\"", spec.path), "no such file in the workspace");
  const auto it = o.files.find(spec.path);
  r.actual = it == o.files.end() ? "absent" : fmt::format("present ({} bytes)", it->second.size());
  return verdict(r, it == o.files.end(), "the file exists");
}

matcher_result lease_outcomes(const matcher_spec& spec, const observation& o) {
  std::vector<std::string> seen;
  seen.reserve(o.leases.size());
  for (const auto& l : o.leases) seen.push_back(l.outcome);
  auto r = begin(spec, fmt::format("lease_outcomes {}", joined(spec.texts)), joined(spec.texts));
  r.actual = joined(seen);
  if (seen.size() != spec.texts.size())
    return verdict(r, false, fmt::format("{} lease(s) were acquired, not {}", seen.size(), spec.texts.size()));
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != spec.texts[i])
      return verdict(r, false, fmt::format("lease {} was {}, not {}", i + 1, seen[i], spec.texts[i]));
  return verdict(r, true, "");
}

matcher_result same_lease(const matcher_spec& spec, const observation& o) {
  std::vector<std::string> ids;
  for (const auto& l : o.leases)
    if (std::find(ids.begin(), ids.end(), l.provider_id) == ids.end()) ids.push_back(l.provider_id);
  auto r = begin(spec, "same_lease", "every turn's lease has one provider id");
  r.actual = fmt::format("{} lease(s): {}", o.leases.size(), joined(ids));
  if (o.leases.empty()) return verdict(r, false, "no lease was acquired");
  return verdict(r, ids.size() == 1, fmt::format("the leases have {} provider ids", ids.size()));
}

}  // namespace

matcher_result judge_env(const matcher_spec& spec, const observation& o) {
  switch (spec.kind) {
    case matcher_kind::file_absent:
      return file_absent(spec, o);
    case matcher_kind::lease_outcomes:
      return lease_outcomes(spec, o);
    default:
      return same_lease(spec, o);
  }
}

}  // namespace tether::e2e
