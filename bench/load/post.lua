-- POSTs one AdmissionReview (the file named by MDADMIT_BODY) to /validate, as kube-apiserver
-- does; with MDADMIT_CLOSE=1 on a new TLS connection each time (Connection: close).
-- MDADMIT_PATH posts it elsewhere instead (run.sh's transport-only row: /healthz, 405).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if os.getenv("MDADMIT_CLOSE") == "1" then
    wrk.headers["Connection"] = "close"
end
local file = assert(io.open(os.getenv("MDADMIT_BODY"), "rb"))
wrk.body = file:read("*a")
file:close()
local path = os.getenv("MDADMIT_PATH")
if path == nil or path == "" then
    path = "/validate"
end
wrk.path = path .. "?timeout=10s&case=" .. os.getenv("MDADMIT_CASE")
