-- wrk script for the service load benchmark (run_load.py): one of three
-- mixes against the example service or its GRDB peer, as 300 users.
--
--   wrk -t2 -c64 -d20s -s mix.lua http://127.0.0.1:8080 -- MIX TOKENS WORDS ACKED [ITEMS]
--
-- MIX: search (90 % searches, 10 % one item indexed), activities (create,
-- becomeCurrent of what was created, current), items (10 items a request);
-- and, for profile_service.py, what the shared stack costs alone: health
-- (GET /health, no token), current (GET /v1/current), searchonly (the
-- search mix's searches without its writes).
-- TOKENS: lines "user token". WORDS: one search word a line. ACKED: a file
-- that done() fills with one acknowledged write a line ("kind user id"),
-- paired by the X-Request-Id the service echoes. ITEMS (run_load.py
-- --corpus-text): real corpus text for the items the mixes write, one item a
-- line, its JSON object without the opening brace and the identifier; an
-- item takes a random line, else it is made of search words.

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("thread_id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local mix
acked_path = nil            -- global: done() reads it from a thread
local users, token_of, words, corpus = {}, {}, {}, {}
local counter = 0
local pending = {}          -- activities created, waiting for their becomeCurrent
acked = {}                  -- acknowledged writes: "kind user id"
statuses = {}

function init(args)
  mix, acked_path = args[1], args[4]
  for line in io.lines(args[2]) do
    local user, token = line:match("^(%S+) (%S+)$")
    table.insert(users, user)
    token_of[user] = token
  end
  for line in io.lines(args[3]) do table.insert(words, line) end
  if args[5] then
    for line in io.lines(args[5]) do table.insert(corpus, line) end
  end
  math.randomseed(os.time() * 1000 + thread_id * 7919)
end

local function headers_for(user, rid)
  local h = { ["Authorization"] = "Bearer " .. token_of[user], ["Content-Type"] = "application/json" }
  if rid then h["X-Request-Id"] = rid end
  return h
end

local function word() return words[math.random(#words)] end

local function item_json(id)
  if #corpus > 0 then return '{"uniqueIdentifier":"' .. id .. '",' .. corpus[math.random(#corpus)] end
  return '{"uniqueIdentifier":"' .. id .. '","domainIdentifier":"notes","attributeSet":{"title":"' .. word() .. ' ' .. word()
    .. '","contentDescription":"' .. word() .. ' ' .. word() .. ' ' .. word() .. ' ' .. word() .. '","keywords":["' .. word() .. '"]}}'
end

function request()
  counter = counter + 1
  local user = users[math.random(#users)]
  if mix == "health" then
    return wrk.format("GET", "/health")
  elseif mix == "current" then
    return wrk.format("GET", "/v1/current", headers_for(user))
  elseif mix == "searchonly" then
    return wrk.format("GET", "/v1/search?q=" .. word() .. "&limit=20", headers_for(user))
  elseif mix == "search" then
    if math.random(100) <= 90 then
      return wrk.format("GET", "/v1/search?q=" .. word() .. "&limit=20", headers_for(user))
    end
    local id = "s" .. thread_id .. "-" .. counter
    return wrk.format("POST", "/v1/items", headers_for(user, "item " .. user .. " " .. id), '{"items":[' .. item_json(id) .. ']}')
  elseif mix == "activities" then
    if #pending > 0 then
      local p = table.remove(pending)
      return wrk.format("POST", "/v1/activities/" .. p.id .. "/becomeCurrent", headers_for(p.user, "current " .. p.user .. " " .. p.id))
    end
    if counter % 2 == 0 then
      return wrk.format("GET", "/v1/current", headers_for(user))
    end
    local id = "a" .. thread_id .. "-" .. counter
    local body = '{"activity":"' .. id .. '","activityType":"com.example.app.viewOrder","device":"d' .. (counter % 3)
      .. '","title":"' .. word() .. '","userInfo":{"n":' .. counter .. '}}'
    return wrk.format("POST", "/v1/activities", headers_for(user, "activity " .. user .. " " .. id), body)
  else
    local batch = "i" .. thread_id .. "-" .. counter
    local items = {}
    for k = 1, 10 do items[k] = item_json(batch .. "-" .. k) end
    return wrk.format("POST", "/v1/items", headers_for(user, "items " .. user .. " " .. batch), '{"items":[' .. table.concat(items, ",") .. ']}')
  end
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  local rid = headers["X-Request-Id"] or headers["x-request-id"]
  if rid == nil or (status ~= 200 and status ~= 201) then return end
  table.insert(acked, rid)
  local kind, user, id = rid:match("^(%S+) (%S+) (%S+)$")
  if kind == "activity" then table.insert(pending, { user = user, id = id }) end
end

function done(summary, latency, requests)
  local out = io.open(threads[1]:get("acked_path"), "w")
  local counts = {}
  for _, thread in ipairs(threads) do
    for _, rid in ipairs(thread:get("acked")) do out:write(rid, "\n") end
    for status, n in pairs(thread:get("statuses")) do counts[status] = (counts[status] or 0) + n end
  end
  out:close()
  local parts = {}
  for status, n in pairs(counts) do table.insert(parts, '"' .. status .. '":' .. n) end
  io.write(string.format('RESULT {"requests":%d,"seconds":%.3f,"errors":%d,"timeouts":%d,"p50_ms":%.3f,"p99_ms":%.3f,"statuses":{%s}}\n',
    summary.requests, summary.duration / 1e6, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status,
    summary.errors.timeout, latency:percentile(50) / 1000, latency:percentile(99) / 1000, table.concat(parts, ",")))
end
