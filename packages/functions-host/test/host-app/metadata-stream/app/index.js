"use strict";
// As in the Functions quickstart: index.js only turns streaming on; the functions live in functions/*.js.
const { app } = require("@azure/functions");
app.setup({ enableHttpStream: true });
