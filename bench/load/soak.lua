-- The soak's mix, one request after another on each connection: an allowed review, a denied
-- one, a malformed body, and a Pod on /mutate whose ModelDeployment the webhook reads from
-- --cluster-files (so it gets a patch).
local function read(name)
    local file = assert(io.open(os.getenv("MDADMIT_SOAK_DIR") .. "/" .. name, "rb"))
    local text = file:read("*a")
    file:close()
    return text
end

local requests = {}
local counter = 0

function init(args)
    local headers = {["Content-Type"] = "application/json"}
    requests = {
        wrk.format("POST", "/validate?timeout=10s", headers, read("allowed.json")),
        wrk.format("POST", "/validate?timeout=10s", headers, read("denied.json")),
        wrk.format("POST", "/validate?timeout=10s", headers, "{\"apiVersion\": "),
        wrk.format("POST", "/mutate?timeout=2s", headers, read("pod.json")),
    }
end

function request()
    counter = counter + 1
    return requests[(counter % #requests) + 1]
end
