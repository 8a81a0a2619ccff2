// Types of source-hash.mjs (plain JS, run by the build before anything is compiled).
export declare const SOURCE_HASH_FILE: string;
export declare function sourceHash(root: string): string;
