/** Types of scripts/generated-code.mjs (whether `npm run generate` has anything to do). */
/** The generated folders, relative to the project root: outputs, never inputs. */
export declare const GENERATED: string[];
/** The stamp a complete run writes last (relative path): the inputs' hash (hex) and a newline. */
export declare const STAMP: string;
/** What the generators read (relative paths; folders are walked, missing entries skipped). */
export declare const INPUTS: string[];
/** Files every run writes (relative paths). */
export declare const OUTPUTS: string[];
/** SHA-256 (hex) over the inputs under `root`: relative paths and contents in path order, the generated folders out. */
export declare function inputsHash(root: string): string;
/** Whether `root`'s stamp holds `hash` (default: the inputs' hash now) and every output file is there. */
export declare function generatedCodeIsCurrent(root: string, hash?: string): boolean;
