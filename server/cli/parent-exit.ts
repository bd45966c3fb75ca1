/**
 * Calls `onExit` once when the process that started this one has exited, where that process is npm (`npm start`,
 * `npx inference-server`, any npm script). npm runs the server through `sh -c`; a SIGTERM or SIGINT sent to npm's
 * PID is passed to that shell, which exits without passing it on, and the server was left running, reparented,
 * holding its ports. Not outside npm: a server started with `nohup inference-server &` is meant to outlive its
 * shell. Polls `process.ppid` (re-read on each access), which changes when the parent exits and the process is
 * reparented; the timer does not keep the process alive. Returns a function that stops watching.
 */
export function onNpmParentExit(onExit: () => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 500): () => void {
  if (env["npm_lifecycle_event"] === undefined) return () => undefined;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onExit();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
