// The header line: how many documents, which program and which LM answer here.
import { health } from "./api.js";
import { byId } from "./dom.js";

export async function serverInfo() {
  try {
    const found = await health(true);
    const program = found.program === "uncompiled" ? "uncompiled program" : `profile ${found.program.profile || "(export)"}`;
    byId("server-info").textContent = `${found.documents} documents · ${program} · LM ${found.lm}`;
  } catch (error) {
    byId("server-info").textContent = `The server is not answering: ${error.message}`;
  }
}
