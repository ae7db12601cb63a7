import { describe, expect, it } from "vitest";
import type { Alert } from "../../src/shared/alerts/AlertChannel";
import type { SiteConfig } from "../../src/shared/config";
import { PermanentSmartsheetError, TransientSmartsheetError } from "../../src/shared/smartsheet/errors";
import type { SmartsheetPort } from "../../src/shared/smartsheet/SmartsheetPort";
import { forEachSite, siteFailureReason } from "../../src/shared/sites/eachSite";
import { failureKind } from "../../src/shared/failures";
import { NoSiteError, sitesFrom } from "../../src/shared/sites/Sites";

const site = (name: string, n: number, token: string): SiteConfig => ({
    name,
    intakeSheetId: 1000 + n,
    templateFolderId: 2000 + n,
    productsFolderId: 3000 + n,
    filingIndexSheetId: 4000 + n,
    tokenSetting: `SMARTSHEET_TOKEN_${name.toUpperCase()}`,
    token,
});

/** A stand-in client that only says which token it was made for. */
const clientOf = (token: string) => ({ token }) as unknown as SmartsheetPort;

describe("the sites registry", () => {
    it("makes one client per token: sites that share a token share its client (and so its pacing and budget)", () => {
        const made: string[] = [];
        const sites = sitesFrom([site("acme", 1, "t-acme"), site("globex", 2, "t-shared"), site("initech", 3, "t-shared")], (token) => {
            made.push(token);
            return clientOf(token);
        });
        expect(made).toEqual(["t-acme", "t-shared"]);
        const [acme, globex, initech] = sites.all();
        expect(globex!.smartsheet).toBe(initech!.smartsheet);
        expect(acme!.smartsheet).not.toBe(globex!.smartsheet);
        // The token stays with the client it was made for; a site carries no token of its own.
        for (const one of sites.all()) expect(Object.keys(one)).not.toContain("token");
    });

    it("finds a job's site by the intake sheet its key names, and refuses a job of no site with a permanent error that says what to do", () => {
        const sites = sitesFrom([site("acme", 1, "a"), site("globex", 2, "b")], clientOf);
        expect(sites.ofJob({ pk: "1002", rk: "7" }).name).toBe("globex");
        expect(sites.named("acme")?.intakeSheetId).toBe(1001);
        const refused = (() => {
            try {
                sites.ofJob({ pk: "1009", rk: "7" });
            } catch (error) {
                return error;
            }
        })();
        expect(refused).toBeInstanceOf(NoSiteError);
        expect(failureKind(refused)).toBe("permanent");
        expect(refused).toMatchObject({
            message: "Intake sheet 1009 belongs to no site this app serves (acme: 1001, globex: 1002); add its site back to SITES, then unpark the job.",
        });
    });
});

describe("running something for every site", () => {
    const logs: string[] = [];
    const log = { info: (line: string) => logs.push(`info ${line}`), warn: (line: string) => logs.push(`warn ${line}`), error: (line: string) => logs.push(`error ${line}`) };
    const now = () => new Date("2026-12-01T10:00:00.000Z");

    it("carries on past a site that fails and past an alert that cannot go out, naming each in an error line", async () => {
        logs.length = 0;
        const sites = sitesFrom([site("acme", 1, "a"), site("globex", 2, "b"), site("initech", 3, "c")], clientOf);
        const sent: Alert[] = [];
        const alerts = {
            send: async (alert: Alert) => {
                if (alert.event === "site.failed" && alert.site === "initech") throw new Error("the webhook answered 500");
                sent.push(alert);
            },
        };
        const run = await forEachSite({ sites, log, alerts, now }, "intake sweep", async (one) => {
            if (one.name !== "globex") throw new PermanentSmartsheetError("Smartsheet getFolderChildren failed with 404/1006: Not Found.", { operation: "getFolderChildren", statusCode: 404 });
            return one.name;
        });
        expect(run.results).toEqual(["globex"]);
        expect(run.failed.map((failure) => failure.site)).toEqual(["acme", "initech"]);
        expect(sent).toEqual([{ event: "site.failed", site: "acme", run: "intake sweep", reason: run.failed[0]!.reason, failedAt: "2026-12-01T10:00:00.000Z" }]);
        expect(logs).toEqual([
            expect.stringMatching(/^error intake sweep: site acme failed: a sheet or folder of the site is gone .*; the other sites carry on$/),
            expect.stringMatching(/^error intake sweep: site initech failed: /),
            expect.stringMatching(/^error intake sweep: the alert that site initech failed did not go through \(the webhook answered 500\); the line above is the alert/),
        ]);
    });

    it("says what to do about a refused token, a missing permission, a gone folder; other failures as they are", () => {
        const [acme] = sitesFrom([site("acme", 1, "a")], clientOf).all();
        const failure = (statusCode: number) => new PermanentSmartsheetError(`Smartsheet getSheet failed with ${statusCode}`, { operation: "getSheet", statusCode });
        expect(siteFailureReason(acme!, failure(401))).toBe(
            "Smartsheet refused the site's token (Smartsheet getSheet failed with 401); put a valid token into the app setting SMARTSHEET_TOKEN_ACME",
        );
        expect(siteFailureReason(acme!, failure(403))).toMatch(/^the site's token may not do this .*share the site's sheets and folders with the token's user \(app setting SMARTSHEET_TOKEN_ACME\)$/);
        expect(siteFailureReason(acme!, failure(404))).toMatch(
            /restore it, or correct the site's ids in SITES \(intake sheet 1001, template folder 2001, products folder 3001, Filing Index 4001\)$/,
        );
        expect(siteFailureReason(acme!, new TransientSmartsheetError("Smartsheet getSheet got no answer: ETIMEDOUT", { operation: "getSheet" }))).toBe(
            "Smartsheet getSheet got no answer: ETIMEDOUT",
        );
        expect(siteFailureReason(acme!, new Error("The table service is unavailable"))).toBe("The table service is unavailable");
    });
});
