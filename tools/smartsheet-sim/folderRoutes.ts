import { z } from "zod";
import { apiErrors } from "./ApiError";
import { assertNameFits } from "./assertNameFits";
import { parseBody } from "./parseBody";
import { enumListParam, intParam } from "./queryParams";
import { renderChild } from "./render";
import { success, type RouteContext } from "./RouteContext";
import type { SimContainer, SimSheet } from "./model";

const RESOURCE_TYPES = ["sheets", "folders", "reports", "sights", "templates"] as const;

export function getFolderChildren({ workspace, id, query }: RouteContext): unknown {
    const folderId = id("folderId");
    workspace.folder(folderId);
    const types = enumListParam(query, "childrenResourceTypes", RESOURCE_TYPES);
    if (types.has("templates") && !types.has("sheets")) throw apiErrors.invalidValue("templates", "childrenResourceTypes");
    enumListParam(query, "include", ["source", "ownerInfo"]);
    const maxItems = intParam(query, "maxItems", { min: 100, max: 1000 }) ?? 100;
    const after = decodeLastKey(query.get("lastKey"), folderId);

    const wanted = (item: SimContainer | SimSheet) =>
        types.size === 0 || types.has("kind" in item ? "folders" : "sheets");
    const remaining = workspace.children(folderId).filter((item) => item.seq > after && wanted(item));
    const page = remaining.slice(0, maxItems);
    const last = page[page.length - 1];
    return {
        data: page.map(renderChild),
        ...(remaining.length > page.length && last ? { lastKey: encodeLastKey(folderId, last.seq) } : {}),
    };
}

const CreateFolderBody = z.looseObject({ name: z.string().min(1) });

export function createFolder({ workspace, config, id, body }: RouteContext): unknown {
    const parent = workspace.folder(id("folderId"));
    const { name } = parseBody(CreateFolderBody, body);
    assertNameFits(name, "folder.name", config.nameLimit);
    const folder = workspace.createFolder(parent.id, name);
    return success({ id: folder.id, name: folder.name, permalink: folder.permalink });
}

export function deleteFolder({ workspace, id }: RouteContext): unknown {
    workspace.deleteFolder(id("folderId"));
    return success();
}

function encodeLastKey(folderId: number, seq: number): string {
    return Buffer.from(`${folderId}.${seq}`).toString("base64url");
}

function decodeLastKey(lastKey: string | null, folderId: number): number {
    if (lastKey === null || lastKey === "") return -1;
    const match = /^(\d+)\.(\d+)$/.exec(Buffer.from(lastKey, "base64url").toString());
    if (!match || Number(match[1]) !== folderId) throw apiErrors.invalidValue(lastKey, "lastKey");
    return Number(match[2]);
}
