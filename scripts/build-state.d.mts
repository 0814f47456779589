/** Types of build-state.mjs (used from TypeScript tests). */
export declare const root: string;
export declare const stamp: string;
export declare function buildState(): "fresh" | "stale" | "missing" | "missing-sources";
export declare function runBuild(): { ok: boolean; output: string };
