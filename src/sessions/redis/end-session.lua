--- Ends a session: deletes its record and removes it from its instance's set and the service index. With
--- ARGV[3] and ARGV[4] it ends only that one binding (same instance and createdAt): the undo of a bind that got
--- no answer, or the end of a record a gateway read, neither of which must end a binding made since.
--- KEYS[1] session hash            <prefix>s:<service>:<id>
--- KEYS[2] service's session index <prefix>si:<service>
--- ARGV[1] session id   ARGV[2] instance set prefix <prefix>b:<service>:
--- ARGV[3] (optional) the instance the record must name   ARGV[4] (optional) the createdAt (ms) it must have
--- Returns 1 when a record was ended, else 0
local instance = redis.call('HGET', KEYS[1], 'instance')
if ARGV[3] and (instance ~= ARGV[3] or redis.call('HGET', KEYS[1], 'createdAt') ~= ARGV[4]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
if not instance then return 0 end
redis.call('SREM', ARGV[2] .. instance, ARGV[1])
redis.call('DEL', KEYS[1])
return 1
