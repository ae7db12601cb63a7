/** The README's two example customer sites, as an operator lists them in SITES (no token: SITES never holds one). */
export const ACME_SITE = {
    name: "acme",
    intakeSheetId: 4583173393803140,
    templateFolderId: 1234567890123456,
    productsFolderId: 2234567890123456,
    filingIndexSheetId: 3234567890123456,
    tokenSetting: "SMARTSHEET_TOKEN_ACME",
} as const;

export const GLOBEX_SITE = {
    name: "globex",
    intakeSheetId: 5583173393803140,
    templateFolderId: 5234567890123456,
    productsFolderId: 6234567890123456,
    filingIndexSheetId: 7234567890123456,
    tokenSetting: "SMARTSHEET_TOKEN_GLOBEX",
} as const;
