import { apiErrors } from "./ApiError";

/** A comma-separated query parameter as its non-empty items. */
export function listParam(query: URLSearchParams, name: string): string[] {
    const raw = query.get(name);
    if (raw === null) return [];
    return raw
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item.length > 0);
}

/** A comma-separated list whose items must all be among `allowed`; otherwise 1018. */
export function enumListParam(query: URLSearchParams, name: string, allowed: readonly string[]): Set<string> {
    const items = listParam(query, name);
    const unknown = items.find((item) => !allowed.includes(item));
    if (unknown !== undefined) throw apiErrors.invalidValue(unknown, name);
    return new Set(items);
}

export function intParam(query: URLSearchParams, name: string, range: { min?: number; max?: number } = {}): number | undefined {
    const raw = query.get(name);
    if (raw === null || raw === "") return undefined;
    const value = Number(raw);
    const min = range.min ?? Number.MIN_SAFE_INTEGER;
    const max = range.max ?? Number.MAX_SAFE_INTEGER;
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
        throw apiErrors.invalidValue(raw, name);
    }
    return value;
}

export function idListParam(query: URLSearchParams, name: string): number[] | undefined {
    if (query.get(name) === null) return undefined;
    return listParam(query, name).map((item) => {
        const value = Number(item);
        if (!/^\d+$/.test(item) || !Number.isSafeInteger(value)) throw apiErrors.invalidValue(item, name);
        return value;
    });
}

export function boolParam(query: URLSearchParams, name: string): boolean | undefined {
    const raw = query.get(name);
    if (raw === null || raw === "") return undefined;
    if (raw.toLowerCase() === "true") return true;
    if (raw.toLowerCase() === "false") return false;
    throw apiErrors.invalidValue(raw, name);
}

/** An ISO-8601 time; a `+` offset that arrived unencoded has become a space. */
export function timeParam(query: URLSearchParams, name: string): number | undefined {
    const raw = query.get(name);
    if (raw === null || raw === "") return undefined;
    const value = Date.parse(raw.replace(" ", "+"));
    if (Number.isNaN(value)) throw apiErrors.invalidValue(raw, name);
    return value;
}

/** `page`/`pageSize` of an index endpoint: past the last page, Smartsheet answers the last page. */
export function pageOf<T>(items: readonly T[], query: URLSearchParams): { pageNumber: number; pageSize: number; totalPages: number; data: T[] } {
    const includeAll = boolParam(query, "includeAll") ?? false;
    const requestedPage = intParam(query, "page", { min: 1 }) ?? 1;
    const pageSize = includeAll ? Math.max(items.length, 1) : (intParam(query, "pageSize", { min: 1 }) ?? 100);
    const totalPages = Math.max(1, Math.ceil(items.length / pageSize));
    const pageNumber = includeAll ? 1 : Math.min(requestedPage, totalPages);
    return { pageNumber, pageSize, totalPages, data: items.slice((pageNumber - 1) * pageSize, pageNumber * pageSize) };
}

/** An index endpoint's answer. With `includeAll` there is no page size: "Omitted if there is no limit to page size". */
export function indexResult<T>(
    items: readonly T[],
    query: URLSearchParams,
): { pageNumber: number; pageSize?: number; totalPages: number; totalCount: number; data: T[] } {
    const page = pageOf(items, query);
    const includeAll = boolParam(query, "includeAll") ?? false;
    return {
        pageNumber: page.pageNumber,
        ...(includeAll ? {} : { pageSize: page.pageSize }),
        totalPages: page.totalPages,
        totalCount: items.length,
        data: page.data,
    };
}
