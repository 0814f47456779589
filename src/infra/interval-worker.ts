/**
 * A background round on an interval inside the server (the mail outbox, the billing run, SII
 * sending): one round at a time (a tick while a round runs is skipped), the timer does not hold
 * the process open, and `stop` asks a running round to stop between items (its AbortSignal) and
 * waits for it: a round checks the signal before each batch, group or message, so what it started
 * is finished and committed, and nothing new is started.
 */
export interface IntervalWorker {
  /** stops the interval, aborts the running round's signal and waits for that round to end */
  stop(): Promise<void>;
}

/** Runs `round` every `intervalMs`; `round` reports its own outcome (it should not throw). */
export function startIntervalWorker(
  round: (signal: AbortSignal) => Promise<unknown>,
  intervalMs: number,
): IntervalWorker {
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const controller = new AbortController();
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = round(controller.signal).finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      controller.abort();
      await running;
    },
  };
}
