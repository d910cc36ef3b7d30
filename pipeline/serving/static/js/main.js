// The page's views (#ask, #history, #profiles, #compare) and what each loads when shown.
import { byId } from "./dom.js";
import { serverInfo } from "./info.js";
import { setUpAsk } from "./ask.js";
import { loadCompare, setUpCompare } from "./compare.js";
import { loadHistory, setUpHistory } from "./history.js";
import { loadProfiles, setUpProfiles } from "./profiles.js";
import { setUpViewer } from "./viewer.js";

const VIEWS = { ask: null, history: loadHistory, profiles: loadProfiles, compare: loadCompare };

function show(name) {
  for (const view of Object.keys(VIEWS)) {
    byId(`view-${view}`).hidden = view !== name;
    const link = document.querySelector(`a[data-view="${view}"]`);
    if (view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (VIEWS[name]) VIEWS[name]();
}

function route() {
  const name = location.hash.slice(1);
  if (name in VIEWS) show(name);
  else if (!name) show("ask");
}

setUpViewer();
setUpAsk();
setUpHistory();
setUpProfiles();
setUpCompare();
window.addEventListener("hashchange", route);
route();
serverInfo();
document.body.dataset.ready = "true";
