/**
 * Tests that need a tool of the machine (javac, Redis) skip with the reason when it is missing on a
 * developer's machine, and fail under CI (`.ci/run` sets REQUIRE_TEST_TOOLS=1 after provisioning
 * them), so nothing skips silently there (issue 33).
 */
export function missingTool(reason: string | null): string | false {
  if (reason === null) return false;
  if (process.env.REQUIRE_TEST_TOOLS === '1') throw new Error(`${reason}, and REQUIRE_TEST_TOOLS=1 forbids skipping (.ci/run installs it)`);
  return reason;
}
