#!/usr/bin/env bash
# npm audit of the console's dependencies, where the registry's advisory endpoint answers. The
# package registry this project's machines reach serves packages but refuses the audit endpoint
# (405); then this says so and passes, since there is nothing to compare against. Any advisory of
# high or critical severity fails it.
set -uo pipefail
cd "$(dirname "$0")/../frontend"
out=$(npm audit --audit-level=high 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -qE "audit endpoint returned an error|ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN" <<<"$out"; then
  echo "npm audit: the registry's advisory endpoint is not reachable from here; not checked"
  exit 0
fi
echo "$out" | tail -20
exit $rc
