import { DefaultAzureCredential, ManagedIdentityCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/shared/config";
import { queueClientFor, storageAccessOf, tableClientFor } from "../../src/shared/storage";

const base = {
    SMARTSHEET_ACCESS_TOKEN: "tok",
    INTAKE_SHEET_ID: "4583173393803140",
    TEMPLATE_FOLDER_ID: "1234567890123456",
    PRODUCTS_FOLDER_ID: "2234567890123456",
    FILING_INDEX_SHEET_ID: "3234567890123456",
    TASK_HUB_NAME: "Sheetwright",
};

describe("reaching the storage account as the Functions host does", () => {
    it("uses the managed identity with AzureWebJobsStorage__accountName and no connection string (Flex Consumption's default)", () => {
        const access = storageAccessOf(loadConfig({ ...base, AzureWebJobsStorage__accountName: "sheetwrightprod", AzureWebJobsStorage__credential: "managedidentity" }));
        expect(access).toMatchObject({
            kind: "identity",
            tableServiceUri: "https://sheetwrightprod.table.core.windows.net",
            queueServiceUri: "https://sheetwrightprod.queue.core.windows.net",
        });
        expect(access.kind === "identity" && access.credential).toBeInstanceOf(ManagedIdentityCredential);
        expect(tableClientFor(access, "SheetwrightJobs").url).toBe("https://sheetwrightprod.table.core.windows.net");
        expect(queueClientFor(access, "provision-jobs").url).toBe("https://sheetwrightprod.queue.core.windows.net/provision-jobs");
    });

    it("takes the service URIs instead of the account name, and the default credential chain with a user-assigned client id", () => {
        const access = storageAccessOf(
            loadConfig({
                ...base,
                AzureWebJobsStorage__blobServiceUri: "https://acct.blob.core.usgovcloudapi.net/",
                AzureWebJobsStorage__tableServiceUri: "https://acct.table.core.usgovcloudapi.net/",
                AzureWebJobsStorage__queueServiceUri: "https://acct.queue.core.usgovcloudapi.net/",
                AzureWebJobsStorage__clientId: "00000000-1111-2222-3333-444444444444",
            }),
        );
        expect(access).toMatchObject({ kind: "identity", tableServiceUri: "https://acct.table.core.usgovcloudapi.net" });
        expect(access.kind === "identity" && access.credential).toBeInstanceOf(DefaultAzureCredential);
        expect(queueClientFor(access, "provision-jobs").url).toBe("https://acct.queue.core.usgovcloudapi.net/provision-jobs");
    });

    it("takes the identity as the infra template sets it: the three service URIs, managedidentity and a user-assigned client id", () => {
        const access = storageAccessOf(
            loadConfig({
                ...base,
                AzureWebJobsStorage__blobServiceUri: "https://acct.blob.core.windows.net/",
                AzureWebJobsStorage__queueServiceUri: "https://acct.queue.core.windows.net/",
                AzureWebJobsStorage__tableServiceUri: "https://acct.table.core.windows.net/",
                AzureWebJobsStorage__credential: "managedidentity",
                AzureWebJobsStorage__clientId: "00000000-1111-2222-3333-444444444444",
            }),
        );
        expect(access).toMatchObject({ kind: "identity", tableServiceUri: "https://acct.table.core.windows.net", queueServiceUri: "https://acct.queue.core.windows.net" });
        expect(access.kind === "identity" && access.credential).toBeInstanceOf(ManagedIdentityCredential);
        expect(access.kind === "identity" && (access.credential as unknown as { clientId?: string }).clientId).toBe("00000000-1111-2222-3333-444444444444");
    });

    it("accepts __credential in any case, as the host does, and takes a user-assigned identity by its resource id", () => {
        const resourceId = "/subscriptions/0000/resourceGroups/rg-sheetwright/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-sheetwright";
        const config = loadConfig({
            ...base,
            AzureWebJobsStorage__accountName: "acct",
            AzureWebJobsStorage__credential: "managedIdentity",
            AzureWebJobsStorage__managedIdentityResourceId: resourceId,
        });
        expect(config.AzureWebJobsStorage__credential).toBe("managedidentity");
        const access = storageAccessOf(config);
        expect(access.kind === "identity" && access.credential).toBeInstanceOf(ManagedIdentityCredential);
        expect(access.kind === "identity" && (access.credential as unknown as { resourceId?: string }).resourceId).toBe(resourceId);
    });

    it("still takes a connection string, which wins when both are given", () => {
        const access = storageAccessOf(loadConfig({ ...base, AzureWebJobsStorage: "UseDevelopmentStorage=true", AzureWebJobsStorage__accountName: "ignored" }));
        expect(access.kind).toBe("connectionString");
        expect(tableClientFor(access, "SheetwrightJobs").url).toBe("http://127.0.0.1:10002/devstoreaccount1");
    });

    it("refuses settings that reach no storage account, or only some of the service URIs, saying what to give", () => {
        expect(() => loadConfig(base)).toThrow(/AzureWebJobsStorage: missing: a storage connection string, or AzureWebJobsStorage__accountName/);
        expect(() => loadConfig({ ...base, AzureWebJobsStorage__tableServiceUri: "https://acct.table.core.windows.net" })).toThrow(
            /AzureWebJobsStorage__blobServiceUri, AzureWebJobsStorage__queueServiceUri: missing/,
        );
        expect(() => loadConfig({ ...base, AzureWebJobsStorage__accountName: "Not_An_Account" })).toThrow(/AzureWebJobsStorage__accountName: expected a storage account name/);
        expect(() => loadConfig({ ...base, AzureWebJobsStorage__accountName: "acct", AzureWebJobsStorage__credential: "password" })).toThrow(/AzureWebJobsStorage__credential: expected managedidentity/);
    });
});
