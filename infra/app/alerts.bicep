// Azure Monitor alerts on the app's telemetry (docs/telemetry.md names the events), routed through one
// Action Group: email, and optionally a webhook (Teams Workflows, PagerDuty, a Logic App...).

param namePrefix string
param location string
param tags object = {}
param applicationInsightsName string
param alertEmail string
@description('Optional webhook the Action Group calls besides the email; empty for none.')
param alertActionWebhookUrl string = ''
@description('Recoveries in one hour that raise the recovery-spike alert.')
param recoverySpikeThreshold int

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = {
  name: 'ag-sheetwright-${namePrefix}'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'sheetwright'
    enabled: true
    emailReceivers: [
      {
        name: 'ops-email'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
    webhookReceivers: empty(alertActionWebhookUrl) ? [] : [
      {
        name: 'ops-webhook'
        serviceUri: alertActionWebhookUrl
        useCommonAlertSchema: true
      }
    ]
  }
}

// One alert per parked job: ops unparks it once the cause is fixed (docs/operations.md).
var parkedQuery = '''
traces
| where tostring(customDimensions.event) == "job.parked"
| extend site = tostring(customDimensions.site), jobKey = tostring(customDimensions.jobKey), reason = tostring(customDimensions.reason)
'''

// One alert per failing site: its token, template or products folder needs a person.
var siteFailedQuery = '''
traces
| where tostring(customDimensions.event) == "site.failed"
| extend site = tostring(customDimensions.site), reason = tostring(customDimensions.reason)
'''

// Many recoveries in an hour: workers keep dying (host restarts, a Smartsheet outage), even if every product still ends done.
var recoveredQuery = '''
traces
| where tostring(customDimensions.event) == "job.recovered"
'''

resource jobParked 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'alert-sheetwright-job-parked-${namePrefix}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Sheetwright: a job is parked'
    description: 'A product job parked and waits for a person: read its reason (npm run jobs -- show <jobKey>), fix the cause, then unpark it.'
    severity: 2
    enabled: true
    scopes: [
      applicationInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    criteria: {
      allOf: [
        {
          query: parkedQuery
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'site'
              operator: 'Include'
              values: ['*']
            }
            {
              name: 'jobKey'
              operator: 'Include'
              values: ['*']
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: false
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

resource siteFailed 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'alert-sheetwright-site-failed-${namePrefix}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Sheetwright: a site fails'
    description: 'A customer site failed a sweep or reaper run (token revoked, template or products folder gone): the reason says what to fix; the other sites carry on.'
    severity: 1
    enabled: true
    scopes: [
      applicationInsights.id
    ]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    criteria: {
      allOf: [
        {
          query: siteFailedQuery
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'site'
              operator: 'Include'
              values: ['*']
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

resource recoverySpike 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: 'alert-sheetwright-recovery-spike-${namePrefix}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: 'Sheetwright: recoveries spike'
    description: 'More jobs than usual were taken over by the reaper in the last hour: the normal path is sick (host restarts, a Smartsheet outage, a rate limit shared with another tool).'
    severity: 2
    enabled: true
    scopes: [
      applicationInsights.id
    ]
    evaluationFrequency: 'PT15M'
    windowSize: 'PT1H'
    criteria: {
      allOf: [
        {
          query: recoveredQuery
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: recoverySpikeThreshold
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    autoMitigate: true
    actions: {
      actionGroups: [
        actionGroup.id
      ]
    }
  }
}

output actionGroupId string = actionGroup.id
