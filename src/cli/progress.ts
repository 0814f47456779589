/**
 * The command line's progress display: a cli-progress bar on stderr (drawn only on a terminal,
 * nothing otherwise). Used by commands run in the command line's own process and, for commands the
 * running server runs, by the command line drawing what the server reports (cli/remote.ts).
 */
import cliProgress from "cli-progress";
import type { ProgressDisplay } from "./context.js";

/** A bar on stderr with cli-progress's `format`; started at the first update. */
export function progressBar(format: string): ProgressDisplay {
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.setTotal(total);
      bar.update(done);
    },
    end() {
      if (started) bar.stop();
      started = false;
    },
  };
}
