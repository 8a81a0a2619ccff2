--- Ends a session: deletes its record and removes it from its instance's set and the service index.
--- KEYS[1] session hash            <prefix>s:<service>:<id>
--- KEYS[2] service's session index <prefix>si:<service>
--- ARGV[1] session id   ARGV[2] instance set prefix <prefix>b:<service>:
--- Returns 1 when a record existed, else 0
local instance = redis.call('HGET', KEYS[1], 'instance')
redis.call('ZREM', KEYS[2], ARGV[1])
if not instance then return 0 end
redis.call('SREM', ARGV[2] .. instance, ARGV[1])
redis.call('DEL', KEYS[1])
return 1
