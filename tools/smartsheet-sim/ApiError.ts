/** A Smartsheet error response: HTTP status plus the `{errorCode, message, refId, detail?}` body. */
export class ApiError extends Error {
    constructor(
        readonly status: number,
        readonly errorCode: number,
        message: string,
        readonly detail?: Record<string, unknown>,
    ) {
        super(message);
        this.name = "ApiError";
    }
}

/** Error factories carrying Smartsheet's own codes and message templates. */
export const apiErrors = {
    tokenMissing: () => new ApiError(401, 1001, "An Access Token is required."),
    tokenInvalid: () => new ApiError(401, 1002, "Your Access Token is invalid."),
    notAuthorized: () => new ApiError(403, 1004, "You are not authorized to perform this action."),
    rowLocked: (detail?: Record<string, unknown>) => new ApiError(403, 1050, "You cannot edit a locked row.", detail),
    lockedRowNotDeletable: () =>
        new ApiError(403, 1092, "You cannot delete this row. Either it or one or more of its children are locked."),
    notFound: () => new ApiError(404, 1006, "Not Found."),
    unparsable: (reason: string) =>
        new ApiError(400, 1008, `Unable to parse request. The following error occurred: ${reason}`),
    missingParameter: (name: string) => new ApiError(400, 1009, `A required parameter is missing from your request: ${name}.`),
    missingAttribute: (name: string, detail?: Record<string, unknown>) =>
        new ApiError(400, 1012, `A required object attribute is missing from your request: ${name}.`, detail),
    invalidValue: (value: unknown, parameter: string, detail?: Record<string, unknown>) =>
        new ApiError(400, 1018, `The value ${describe(value)} was not valid for the parameter ${parameter}.`, detail),
    bodyRequired: () => new ApiError(400, 1024, "The HTTP request body is required for this Method."),
    attributesNotAllowed: (names: string, detail?: Record<string, unknown>) =>
        new ApiError(400, 1032, `The attribute(s) ${names} are not allowed for this operation.`, detail),
    invalidColumnId: (columnId: unknown, detail?: Record<string, unknown>) =>
        new ApiError(400, 1036, `The columnId ${describe(columnId)} is invalid.`, detail),
    duplicateColumnId: (columnId: number, detail?: Record<string, unknown>) =>
        new ApiError(400, 1037, `The columnId ${columnId} is included more than once in a single row.`, detail),
    tooLong: (attribute: string, limit: number, actual: number) =>
        new ApiError(400, 1041, `The value for ${attribute} must be ${limit} characters in length or less, but was ${actual}.`),
    notStrict: (columnId: number, value: unknown, type: string, detail?: Record<string, unknown>) =>
        new ApiError(
            400,
            1042,
            `The value for cell in column ${columnId}, ${describe(value)}, did not conform to the strict requirements for type ${type}.`,
            detail,
        ),
    onePrimaryColumn: () => new ApiError(400, 1055, "One and only one column must be primary."),
    titlesNotUnique: () => new ApiError(400, 1056, "Column titles must be unique."),
    primaryMustBeText: () => new ApiError(400, 1057, "Primary columns must be of type TEXT_NUMBER."),
    symbolNotSupported: (symbol: string, type: string) =>
        new ApiError(400, 1058, `Column type of ${type} does not support symbol of type ${symbol}.`),
    optionsWithSymbol: () => new ApiError(400, 1059, "Column options are not allowed when a symbol is specified."),
    optionsNotAllowed: (type: string) => new ApiError(400, 1060, `Column options are not allowed for column type ${type}.`),
    maxCountExceeded: (field: string) => new ApiError(400, 1061, `Max count exceeded for field ${field}.`),
    invalidParentId: (id: number) => new ApiError(400, 1063, `Invalid parentId: ${id}.`),
    invalidSiblingId: (id: number) => new ApiError(400, 1064, `Invalid siblingId: ${id}.`),
    columnNotDeletable: () => new ApiError(400, 1065, "The column specified cannot be deleted."),
    duplicateSystemColumnType: (systemColumnType: string) => new ApiError(400, 1077, `Duplicate system column type: ${systemColumnType}.`),
    typeNotForSystemColumn: (type: string, systemColumnType: string) =>
        new ApiError(400, 1079, `Column type ${type} is not supported for system column type ${systemColumnType}.`),
    systemColumnsOnlyType: () => new ApiError(400, 1089, "The type specified is only used with System Columns."),
    typeRequiredForChange: () => new ApiError(400, 1090, "Column.type is required when changing symbol, systemColumnType or options."),
    methodNotAllowed: (method: string) => new ApiError(405, 1122, `Requested URL does not support this method: ${method}.`),
    mixedRowLocations: () =>
        new ApiError(
            400,
            1123,
            "Specifying multiple row locations is not yet supported. Each row must use the same row location attribute and value (toBottom, toTop, parentId, siblingId, above).",
        ),
    alreadyExists: () => new ApiError(400, 1129, "The resource you tried to create already exists."),
    valueAndObjectValue: (detail?: Record<string, unknown>) =>
        new ApiError(400, 1130, "One of cell.value or objectValue may be set, but not both.", detail),
    titlesNotUniqueInRequest: () => new ApiError(400, 1133, "Column titles are not unique among input columns."),
    duplicateSystemColumnTypeInRequest: () => new ApiError(400, 1134, "Duplicate system column type among input columns."),
    indexDiffersInRequest: (index: number, firstIndex: number) =>
        new ApiError(400, 1135, `Input column index ${index} is different from the first input column index ${firstIndex}.`),
    projectSheetType: (type: string) =>
        new ApiError(400, 1142, `Column type ${type} is reserved for project sheets and may not be manually set on a column.`),
    unsupportedOperation: (what: string) => new ApiError(400, 1146, `Unsupported operation: ${what}.`),
    formulaWithoutEquals: (detail?: Record<string, unknown>) =>
        new ApiError(400, 1162, "A formula must always start with an equal sign (=).", detail),
    formulaWithValue: (detail: Record<string, unknown>) =>
        new ApiError(
            400,
            1163,
            "If cell.formula is specified, then value, objectValue, image, hyperlink, and linkInFromCell must not be specified.",
            detail,
        ),
    attributeCombination: (names: string) =>
        new ApiError(400, 1178, `The following combination of attributes is not allowed for this operation: ${names}.`),
    duplicateSummaryTitle: () => new ApiError(400, 1193, "Duplicate summary field title."),
    duplicateSummaryTitleInRequest: () => new ApiError(400, 1208, "Duplicate summary field title in request."),
    columnFormulaCell: (detail?: Record<string, unknown>) => new ApiError(400, 1302, "Cannot edit column formula cells.", detail),
    scopeObjectNotFound: () => new ApiError(404, 1151, "Scope object not found."),
    urlMustBeHttps: () => new ApiError(400, 1152, "URL must have HTTPS."),
    webhookAppRevoked: () => new ApiError(403, 1153, "Webhook app revoked."),
    webhookDisabledBySmartsheet: () => new ApiError(403, 1154, "Webhook disabled by Smartsheet."),
    unexpected: () =>
        new ApiError(
            500,
            4000,
            "An unexpected error has occurred. Please contact the Support team at https://help.smartsheet.com/contact for assistance.",
        ),
    serverTimeout: () => new ApiError(500, 4002, "Server timeout exceeded. Request has failed."),
    rateLimited: () => new ApiError(429, 4003, "Rate limit exceeded."),
    retryLater: () =>
        new ApiError(
            500,
            4004,
            "An unexpected error has occurred. Please retry your request. If you encounter this error repeatedly, please contact api@smartsheet.com for assistance.",
        ),
};

function describe(value: unknown): string {
    return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
}
