--- Binds a session to an instance, atomically: only when the session has no live binding and the
--- instance has fewer than `target` live sessions. Ended or expired members of the instance's set are
--- pruned first. A record past its expiresAt (by the gateway's clock, ARGV[1]) counts as absent; Redis drops
--- it an hour after that (PEXPIRE, relative, so a skew between the clocks does not matter) in case no gateway
--- ends it.
--- KEYS[1] session hash            <prefix>s:<service>:<id>
--- KEYS[2] instance's session set  <prefix>b:<service>:<instance>
--- KEYS[3] service's session index <prefix>si:<service> (zset, score createdAt)
--- KEYS[4] services set            <prefix>services
--- ARGV[1] now (ms)   ARGV[2] target   ARGV[3] session id   ARGV[4] service
--- ARGV[5] createdAt (ms)   ARGV[6] expiresAt (ms, '' for none)   ARGV[7] session hash prefix <prefix>s:<service>:
--- ARGV[8..] the record as field, value pairs
--- Returns {'exists', field, value, ...} (the binding that holds) | {'full'} | {'bound'}
local now = tonumber(ARGV[1])

local function live(key)
  if redis.call('EXISTS', key) == 0 then return false end
  local exp = redis.call('HGET', key, 'expiresAt')
  return not (exp and exp ~= '' and tonumber(exp) <= now)
end

if live(KEYS[1]) then
  local fields = redis.call('HGETALL', KEYS[1])
  table.insert(fields, 1, 'exists')
  return fields
end
for _, member in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if not live(ARGV[7] .. member) then redis.call('SREM', KEYS[2], member) end
end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return {'full'} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 8))
if ARGV[6] ~= '' then redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[6]) - now, 0) + 3600000) end
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
return {'bound'}
