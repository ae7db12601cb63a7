import { beforeAll, describe, expect, inject, it } from "vitest";
import {
    JobConcurrencyError,
    JobExistsError,
    JobStateConflictError,
    JobStore,
    InvalidJobRowError,
} from "../../src/shared/jobs/JobStore";
import { createTableClient } from "../../src/shared/storage";
import { makeJobRow } from "../helpers/jobs";
import { uniqueName } from "../helpers/names";

describe("JobStore against Azurite", () => {
    let store: JobStore;
    const connectionString = inject("azuriteConnectionString");
    const tableName = uniqueName("jobs");

    beforeAll(async () => {
        store = new JobStore(createTableClient(connectionString, tableName));
        await store.ensureTable();
    });

    it("round-trips a row with its maps, lists and 16-digit ids", async () => {
        const created = await store.create(
            makeJobRow({
                state: "running",
                stage: "copy",
                folderId: 7340285929285508,
                copies: { "Document Register": { templateSheetId: 1234567890123456, sheetId: 8765432109876543, name: "IND-1042 Document Register" } },
                remapped: ["Approvals"],
            }),
        );
        const read = await store.get({ pk: created.row.intakeSheetId, rk: created.row.intakeRowId });
        expect(read?.row).toEqual(created.row);
        expect(read?.row.folderId).toBe(7340285929285508);
        expect(read?.row.copies["Document Register"]?.sheetId).toBe(8765432109876543);
        expect(read?.etag).toBe(created.etag);
    });

    it("refuses to create a job twice and leaves the first untouched", async () => {
        const row = makeJobRow();
        await store.create(row);
        await expect(store.create({ ...row, productName: "Other" })).rejects.toBeInstanceOf(JobExistsError);
        const read = await store.get({ pk: row.intakeSheetId, rk: row.intakeRowId });
        expect(read?.row.productName).toBe(row.productName);
    });

    it("loses a write made with a stale ETag, with a typed conflict, and keeps the newer row", async () => {
        const first = await store.create(makeJobRow());
        const winner = await store.replace(first, { ...first.row, state: "running", stage: "copy" }, { from: ["queued"] });
        await expect(store.replace(first, { ...first.row, productName: "stale" }, { from: ["queued"] })).rejects.toBeInstanceOf(
            JobConcurrencyError,
        );
        const read = await store.require({ pk: first.row.intakeSheetId, rk: first.row.intakeRowId });
        expect(read.row.state).toBe("running");
        expect(read.etag).toBe(winner.etag);
    });

    it("never moves a done job back to running, even with a fresh ETag", async () => {
        const created = await store.create(makeJobRow({ state: "running", stage: "register" }));
        const done = await store.replace(created, { ...created.row, state: "done" }, { from: ["running"] });
        const lateRunning = { ...done.row, state: "running" as const, stage: "copy" as const };
        await expect(store.replace(done, lateRunning, { from: ["queued", "running"] })).rejects.toBeInstanceOf(JobStateConflictError);
        const key = { pk: done.row.intakeSheetId, rk: done.row.intakeRowId };
        await expect(store.update(key, () => lateRunning, { from: ["queued", "running"] })).rejects.toMatchObject({
            name: "JobStateConflictError",
            actual: "done",
        });
        expect((await store.require(key)).row.state).toBe("done");
    });

    it("re-applies a change after losing a race, so concurrent updates all land", async () => {
        const created = await store.create(makeJobRow({ state: "running", stage: "copy" }));
        const key = { pk: created.row.intakeSheetId, rk: created.row.intakeRowId };
        const names = ["Document Register", "Translations", "Specifications", "Approvals", "Suppliers", "Change Log", "Risk Register"];
        await Promise.all(
            names.map((name, index) =>
                store.update(
                    key,
                    (row) => ({ ...row, copies: { ...row.copies, [name]: { templateSheetId: 1000 + index, sheetId: 2000 + index, name } } }),
                    { from: ["running"] },
                ),
            ),
        );
        const read = await store.require(key);
        expect(Object.keys(read.row.copies).sort()).toEqual([...names].sort());
    });

    it("writes nothing when a change leaves the row as it is", async () => {
        const created = await store.create(makeJobRow());
        const key = { pk: created.row.intakeSheetId, rk: created.row.intakeRowId };
        const same = await store.update(key, (row) => row, { from: ["queued"] });
        expect(same.etag).toBe(created.etag);
    });

    it("finds stale open jobs from the index without reading finished ones", async () => {
        const pk = "4000000000000777";
        const old = new Date(Date.now() - 60 * 60_000).toISOString();
        for (let i = 0; i < 60; i++) await store.create(makeJobRow({ intakeSheetId: pk, state: "done", lastProgressAt: old }));
        const stale = await store.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "copy", lastProgressAt: old }));
        await store.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "copy" }));
        await store.create(makeJobRow({ intakeSheetId: pk, state: "parked", lastProgressAt: old }));

        store.entitiesRead = 0;
        const { found } = await store.listActive(pk, { states: ["queued", "running"], staleBefore: new Date(Date.now() - 15 * 60_000) });
        expect(found.map((job) => job.row.intakeRowId)).toEqual([stale.row.intakeRowId]);
        expect(store.entitiesRead).toBe(2); // one index entry, one job row
    });

    it("drops a job from the index when it finishes", async () => {
        const pk = "4000000000000888";
        const created = await store.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "register" }));
        expect((await store.listActive(pk)).found).toHaveLength(1);
        await store.replace(created, { ...created.row, state: "done" }, { from: ["running"] });
        expect((await store.listActive(pk)).found).toHaveLength(0);
        expect((await store.listByState(pk, "done")).found.map((job) => job.row.intakeRowId)).toEqual([created.row.intakeRowId]);
    });

    it("reads a row written while the remap stage was called rename at the remap stage, and writes it back so", async () => {
        const { row } = await store.create(makeJobRow({ state: "parked", stage: "remap" }));
        const key = { pk: row.intakeSheetId, rk: row.intakeRowId };
        const table = createTableClient(connectionString, tableName);
        await table.updateEntity({ partitionKey: key.pk, rowKey: key.rk, stage: "rename" }, "Merge");
        expect((await store.get(key))?.row.stage).toBe("remap");
        await store.update(key, (current) => ({ ...current, parkReason: "fixed by hand" }), { from: ["parked"] });
        expect((await table.getEntity(key.pk, key.rk)).stage).toBe("remap");
    });

    it("reports a corrupted row instead of guessing", async () => {
        const row = makeJobRow();
        const table = createTableClient(connectionString, tableName);
        await table.createEntity({ partitionKey: row.intakeSheetId, rowKey: row.intakeRowId, kind: "job", state: "exploded" });
        await expect(store.get({ pk: row.intakeSheetId, rk: row.intakeRowId })).rejects.toBeInstanceOf(InvalidJobRowError);
    });
});
