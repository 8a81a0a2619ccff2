--- Updates fields of an existing session record; does nothing when it does not exist (ended meanwhile).
--- KEYS[1] session hash <prefix>s:<service>:<id>
--- ARGV[1..] field, value pairs
--- Returns 1 when the record existed, else 0
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
