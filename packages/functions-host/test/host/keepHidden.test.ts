import { describe, expect, inject, it } from "vitest";
import { TaskHub } from "../../src/durable/taskHub";
import { StorageAccount } from "../../src/storage/storageAccount";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a message held while its work outlasts the queue's visibility timeout", () => {
    it("regression chaos seed 1393357573 pop receipt loop: stays invisible while the work runs and is deleted with its latest pop receipt", async () => {
        const hub = new TaskHub(new StorageAccount(inject("azuriteConnectionString")), `KeepHidden${Date.now() % 1_000_000}`);
        const queue = hub.controlQueue;
        await queue.create();
        try {
            await queue.sendMessage("slow episode");
            const [received] = (await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 1 })).receivedMessageItems;
            const item = { queueMessageId: received!.messageId, popReceipt: received!.popReceipt };
            const firstReceipt = item.popReceipt;

            // Work three times as long as the message's visibility: nobody else may receive it meanwhile.
            const seenMeanwhile = await hub.keepHidden(queue, [item], 1_000, async () => {
                let seen = 0;
                for (let poll = 0; poll < 6; poll++) {
                    await sleep(500);
                    seen += (await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 1 })).receivedMessageItems.length;
                }
                return seen;
            });

            expect(seenMeanwhile).toBe(0);
            expect(item.popReceipt).not.toBe(firstReceipt);
            await queue.deleteMessage(item.queueMessageId, item.popReceipt);
            expect((await queue.peekMessages({ numberOfMessages: 1 })).peekedMessageItems).toHaveLength(0);
        } finally {
            await queue.delete();
        }
    });
});
