-- wrk script for tools/bench.py: replays a prepared list of requests, one per line of a file:
--   METHOD <TAB> TOKEN <TAB> TARGET <TAB> BODY
-- TARGET is the path with its query string; TOKEN may be empty (no Authorization header);
-- BODY (JSON on one line) may be empty (no body). Each thread starts at its own offset in the
-- list and cycles through it, so concurrent connections ask for different pages, queries and
-- tokens. Usage:
--   wrk -t2 -c16 -d20s --latency -s requests.lua http://127.0.0.1:PORT -- REQUEST_FILE THREADS
-- At the end one line "BENCH-JSON {...}" carries the numbers bench.py reads (latencies in us).

local threads = {}
local next_id = 0

function setup(thread)
   thread:set("id", next_id)
   next_id = next_id + 1
   table.insert(threads, thread)
end

local requests = {}
local pos = 1

function init(args)
   local file = assert(args[1], "usage: -- REQUEST_FILE THREADS")
   local nthreads = tonumber(args[2] or "1")
   local f = assert(io.open(file, "rb"))
   for line in f:lines() do
      local method, token, target, body = line:match("^([^\t]+)\t([^\t]*)\t([^\t]+)\t?(.*)$")
      if method then
         local headers = {}
         if token ~= "" then headers["Authorization"] = "Bearer " .. token end
         if body ~= "" then
            headers["Content-Type"] = "application/json"
         else
            body = nil
         end
         requests[#requests + 1] = wrk.format(method, target, headers, body)
      end
   end
   f:close()
   assert(#requests > 0, "no requests in " .. file)
   pos = (id * math.floor(#requests / nthreads)) % #requests + 1
end

function request()
   local r = requests[pos]
   pos = pos % #requests + 1
   return r
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCH-JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f,' ..
      '"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
      summary.requests, summary.duration, summary.bytes,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
      latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
