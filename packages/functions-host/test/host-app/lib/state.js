"use strict";
// In-memory record of what the app saw, served by GET /api/probe; with HOSTAPP_COUNTER_DIR set,
// activity runs are also appended to files there (the crash test reads them across processes).
const fs = require("node:fs");
const path = require("node:path");

const state = {
    hooks: [],
    preInvocations: 0,
    postInvocations: 0,
    logHook: [],
    ticks: [],
    manualTimer: 0,
    flakyTimerRuns: [],
    flakyTimerSucceedsOnRun: 1,
    queueMessages: [],
    activityRuns: {},
    blocking: {},
};

const releases = new Map();

function counterDir() {
    return process.env.HOSTAPP_COUNTER_DIR;
}

/** Records one run of an activity under `key`; returns the run number (1, 2, ...), across host processes when they share a counter dir. */
function recordRun(key, detail) {
    const runs = (state.activityRuns[key] = state.activityRuns[key] || []);
    runs.push({ at: Date.now(), ...detail });
    const dir = counterDir();
    if (!dir) return runs.length;
    const file = path.join(dir, `${key}.log`);
    fs.appendFileSync(file, `${process.pid} ${Date.now()}\n`);
    return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).length;
}

function release(key) {
    const waiters = releases.get(key) || [];
    releases.delete(key);
    state.blocking[key] = { ...(state.blocking[key] || {}), released: true };
    for (const resolve of waiters) resolve();
}

/** Resolves when POST /api/release/{key} is called, or when <counterDir>/<key>.release exists. */
function waitForRelease(key) {
    if (state.blocking[key] && state.blocking[key].released) return Promise.resolve();
    return new Promise((resolve) => {
        const list = releases.get(key) || [];
        list.push(resolve);
        releases.set(key, list);
        const dir = counterDir();
        if (dir) {
            const file = path.join(dir, `${key}.release`);
            const timer = setInterval(() => {
                if (fs.existsSync(file)) {
                    clearInterval(timer);
                    resolve();
                }
            }, 50);
        }
    });
}

function hookFile(name) {
    const dir = counterDir();
    if (dir) fs.appendFileSync(path.join(dir, "hooks.log"), `${name}\n`);
}

module.exports = { state, recordRun, release, waitForRelease, hookFile };
