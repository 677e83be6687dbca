#!/bin/sh
# tools/check-layers (make layers): the tree passes; a copy of it with
# includes planted that go up a layer fails, naming each FILE:LINE and
# the rule, while allowed includes, comments and tests/ stay quiet.
. "$(dirname "$0")/lib.sh"

CHECK=$TOP/tools/check-layers
RULE="(layers point down: common < proto < skills < agents < orchestrator)"

run sh "$CHECK"
expect_rc 0 "the repository's own tree"
expect_in "$T/out" "every include points down"
pass "every include in the tree points down"

mkdir -p "$T/tree"
(cd "$TOP" && tar cf - common proto skills agents orchestrator tests/unit) |
    (cd "$T/tree" && tar xf -)
run sh "$CHECK" "$T/tree"
expect_rc 0 "an untouched copy"
pass "an untouched copy passes"

# Upward, each in its own way; line numbers are the ones expected below.
cat >"$T/tree/common/planted.h" <<'EOF'
/* planted: common reaching up */
#include "common/buf.h"
#include "skills/glob.h"
EOF
cat >"$T/tree/proto/planted.c" <<'EOF'
#include <sys/stat.h>
#  include   "orchestrator/run.h"
EOF
cat >"$T/tree/skills/planted.c" <<'EOF'
#include "proto/json.h"
#include <agents/llm.h>
EOF
cat >"$T/tree/agents/planted.c" <<'EOF'
#include "agents/llm.h"
#include "skills/proc.h"
#include "../orchestrator/run.h"
EOF
# Allowed: a layer's own and lower headers, system headers, an include
# inside a comment, the top layer including anything, tests/ exempt.
cat >"$T/tree/common/allowed.c" <<'EOF'
#include "common/planted.h"
#include <json-c/json.h>
/* moved: #include "skills/glob.h" */
EOF
cat >"$T/tree/orchestrator/allowed.c" <<'EOF'
#include "agents/llm.h"
#include "common/buf.h"
#include "orchestrator/run.h"
EOF
cat >"$T/tree/tests/unit/test_planted.c" <<'EOF'
#include "orchestrator/run.h"
EOF

run sh "$CHECK" "$T/tree"
expect_rc 1 "planted upward includes"
expect_in "$T/err" "common/planted.h:3: #include \"skills/glob.h\" goes up from common (layer 0) to skills (layer 2); common/ may include only common/ $RULE"
expect_in "$T/err" "proto/planted.c:2: #include \"orchestrator/run.h\" goes up from proto (layer 1) to orchestrator (layer 4); proto/ may include only common/, proto/ $RULE"
expect_in "$T/err" "skills/planted.c:2: #include <agents/llm.h> goes up from skills (layer 2) to agents (layer 3); skills/ may include only common/, proto/, skills/ $RULE"
expect_in "$T/err" "agents/planted.c:3: #include \"../orchestrator/run.h\" names ../, which is no layer; agents/ may include only common/, proto/, skills/, agents/ $RULE"
expect_in "$T/err" "check-layers: 4 includes go against the layers"
[ "$(grep -c ': #include ' "$T/err")" = 4 ] ||
    fail "expected exactly 4 reports, got $(grep -c ': #include ' "$T/err")"
expect_not_in "$T/err" "allowed"
expect_not_in "$T/err" "tests/unit"
expect_not_in "$T/out" "every include points down"
pass "upward includes are named by FILE:LINE with the rule; others pass"

rm "$T/tree/common/planted.h" "$T/tree/proto/planted.c" \
    "$T/tree/skills/planted.c" "$T/tree/agents/planted.c"
printf '#include "common/buf.h"\n' >"$T/tree/common/planted.h"
run sh "$CHECK" "$T/tree"
expect_rc 0 "the plants removed"
pass "removing them passes again"

run sh "$CHECK" "$T/tmp"
expect_rc 2 "a tree without layer folders"
expect_in "$T/err" "holds none of the layer folders"
pass "a tree without layers is an error, not a pass"
