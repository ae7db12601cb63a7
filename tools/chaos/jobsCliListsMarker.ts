/** Starts each list's output in `jobsCliLists`' stdout, followed by the list's index (its own module: the harness loads no app code). */
export const LIST_MARKER = "@@chaos-jobs-list ";
