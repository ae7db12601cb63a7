/**
 * The host's instance id rules: at most 256 characters, not starting with '@', and none of
 * '/', '\', '#', '?' or control characters (they break the Azure Storage keys and the HTTP routes).
 * Returns the problem, or undefined when the id is valid.
 */
export function instanceIdProblem(instanceId: string): string | undefined {
    if (instanceId.length === 0) return "Instance ID must not be empty.";
    if (instanceId.length > 256) return `Instance ID '${instanceId.slice(0, 40)}…' is ${instanceId.length} characters long; the maximum is 256.`;
    if (instanceId.startsWith("@")) return `Instance ID '${instanceId}' must not start with '@'.`;
    // eslint-disable-next-line no-control-regex
    if (/[/\\#?\u0000-\u001f\u007f-\u009f]/.test(instanceId)) return `Instance ID '${instanceId}' contains a character that is not allowed ('/', '\\', '#', '?' or a control character).`;
    return undefined;
}
