// Every registration module, loaded by the Functions host through package.json "main". Each one
// reads the validated configuration first, so bad settings stop the app from loading with one
// message that names every problem.
import { app } from "@azure/functions";
import { shutdownTelemetry } from "./shared/composition";
import "./functions/intakeSweep";
import "./functions/intakeFullSweep";
import "./functions/provisionStarter";
import "./functions/provisionProduct";
import "./functions/provisioningActivities";
import "./functions/reaper";
import "./functions/reconcileOnStart";
import "./functions/jobsApi";
import "./functions/unparkJob";
import "./functions/intakeWebhook";
import "./functions/intakeSweepRequested";
import "./functions/convergence";

// What telemetry still holds goes out before the worker stops.
app.hook.appTerminate(() => shutdownTelemetry());
