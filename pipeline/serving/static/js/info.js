// The header line: how many documents, which program and which LM answer here.
import { getJSON } from "./api.js";
import { byId } from "./dom.js";

export async function serverInfo() {
  try {
    const health = await getJSON("/v1/health");
    const program = health.program === "uncompiled" ? "uncompiled program" : `profile ${health.program.profile || "(export)"}`;
    byId("server-info").textContent = `${health.documents} documents · ${program} · LM ${health.lm}`;
  } catch (error) {
    byId("server-info").textContent = `The server is not answering: ${error.message}`;
  }
}
