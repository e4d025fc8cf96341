// The container's termination message, where the kubelet reads it (and Berth, or kubectl describe
// pod, shows it). Written only if the file is already there (the kubelet mounts it): a process
// run outside a pod never creates it.
import { closeSync, ftruncateSync, openSync, writeSync } from "node:fs";

export function writeTerminationMessage(file: string, message: string): void {
  try {
    const fd = openSync(file, "r+");
    try {
      ftruncateSync(fd);
      writeSync(fd, message);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not in a pod: the log line says the same.
  }
}
