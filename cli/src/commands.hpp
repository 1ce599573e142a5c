#pragma once

#include "options.hpp"

namespace mdadmit::cli {

int run_check(const Options& options);
int run_audit(const Options& options);
int run_review(const Options& options);
int run_test(const Options& options);
int run_rules(const Options& options);
int run_render(const Options& options);

// Whether to colour text output: only on a terminal, and not when NO_COLOR is set.
bool use_colour();

}  // namespace mdadmit::cli
