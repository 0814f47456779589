/**
 * A background round on an interval inside the server (the mail outbox, the billing run, SII
 * sending): one round at a time (a tick while a round runs is skipped), the timer does not hold
 * the process open, and `stop` waits for a running round.
 */
export interface IntervalWorker {
  /** stops the interval and waits for a running round */
  stop(): Promise<void>;
}

/** Runs `round` every `intervalMs`; `round` reports its own outcome (it should not throw). */
export function startIntervalWorker(round: () => Promise<unknown>, intervalMs: number): IntervalWorker {
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = round().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
