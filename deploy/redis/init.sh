#!/bin/sh
# The init container of each Redis pod (redis.yaml), before redis and sentinel start:
# ask the sentinels who the master is (after a failover it is no longer redis-0) and
# write this pod's two config files under /data/conf.
set -eu
me="$(hostname).redis-headless"
master=""
export REDISCLI_AUTH="$REDIS_PASSWORD"  # the sentinels require it too
for i in 0 1 2; do
  peer="redis-$i.redis-headless"
  [ "$peer" = "$me" ] && continue
  found="$(redis-cli -h "$peer" -p 26379 --raw \
    sentinel get-master-addr-by-name kalaro 2>/dev/null | head -n1 || true)"
  if [ -n "$found" ]; then master="$found"; break; fi
done
# A new cluster: redis-0 starts as the master.
[ -n "$master" ] || master="redis-0.redis-headless"
mkdir -p /data/conf
cp /config/redis.conf /data/conf/redis.conf
{
  echo "dir /data"
  echo "replica-announce-ip $me"
  [ "$master" = "$me" ] || echo "replicaof $master 6379"
} >> /data/conf/redis.conf
cat > /data/conf/sentinel.conf <<EOF
port 26379
dir /data
requirepass $REDIS_PASSWORD
sentinel sentinel-pass $REDIS_PASSWORD
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip $me
sentinel monitor kalaro $master 6379 2
sentinel auth-pass kalaro $REDIS_PASSWORD
sentinel down-after-milliseconds kalaro 5000
sentinel failover-timeout kalaro 60000
sentinel parallel-syncs kalaro 1
EOF
echo "redis: $me follows $master"
