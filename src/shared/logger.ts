/** Where the app's lines go: the invocation's context on the host (composition.ts builds it). */
export interface Logger {
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
}
